"""Every runtime dependency's licence lets PocketVoice be distributed under GPL-3.0-or-later.

The dependencies are those `pyproject.toml` names in `dependencies` (not the test extra), and
everything they require in turn, as installed here (extras and markers followed as pip follows
them). Each distribution's licence is read from its metadata: `License-Expression` (PEP 639)
when it has one, else its `License` field and `License ::` classifiers, else the text of its
licence files. Each is mapped to SPDX and checked against `COMPATIBLE`, the licences the FSF
lists as GPL-3.0-compatible. An unknown or incompatible licence fails the test, naming the
package; `QUESTIONED` holds the ones looked at by hand and let through, each with why.

SPDX expressions are validated and normalised by `packaging.licenses` (packaging comes with
the runtime dependencies). licensecheck was considered: it resolves the dependencies itself
from PyPI rather than reading what is installed, has its own compatibility table, and would
add a dozen packages to the test extra; this walk needs none.
"""

from __future__ import annotations

import email.message
import re
import tomllib
import warnings
from collections.abc import Iterable
from importlib.metadata import Distribution, PackageNotFoundError, distribution
from pathlib import Path

import pytest
from packaging.licenses import InvalidLicenseExpression, canonicalize_license_expression
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parent.parent

# GPL-3.0-compatible (the FSF's list of free licences compatible with the GPL, version 3).
# Not here, so refused: GPL-2.0-only, AGPL, EPL, CDDL, the 4-clause BSD, Apache-1.x, MPL-2.0
# "no copyleft exception", non-commercial or no-derivatives terms, proprietary terms.
COMPATIBLE = frozenset(
    {
        "0BSD",
        "Apache-2.0",
        "Artistic-2.0",
        "BSD-2-Clause",
        "BSD-3-Clause",
        "BSL-1.0",
        "CC0-1.0",
        "GPL-2.0-or-later",
        "GPL-3.0-only",
        "GPL-3.0-or-later",
        "HPND",
        "ISC",
        "LGPL-2.0-only",
        "LGPL-2.0-or-later",
        "LGPL-2.1-only",
        "LGPL-2.1-or-later",
        "LGPL-3.0-only",
        "LGPL-3.0-or-later",
        "MIT",
        "MIT-0",
        "MPL-2.0",
        "NCSA",
        "PSF-2.0",
        "Python-2.0",
        "Unlicense",
        "WTFPL",
        "X11",
        "Zlib",
        # SPDX's deprecated forms of the same
        "GPL-2.0+",
        "GPL-3.0",
        "GPL-3.0+",
        "LGPL-2.0",
        "LGPL-2.0+",
        "LGPL-2.1",
        "LGPL-2.1+",
        "LGPL-3.0",
        "LGPL-3.0+",
    }
)
EXCEPTIONS = frozenset({"LLVM-exception", "GCC-exception-3.1", "Classpath-exception-2.0"})

CLASSIFIERS = {  # `License :: ...` classifiers -> SPDX
    "OSI Approved :: MIT License": "MIT",
    "OSI Approved :: MIT No Attribution License (MIT-0)": "MIT-0",
    # The classifier names no clause count; the OSI never approved the 4-clause BSD licence.
    "OSI Approved :: BSD License": "BSD-3-Clause",
    # Nor a version: Apache 1.x predates the classifiers' use on PyPI by years.
    "OSI Approved :: Apache Software License": "Apache-2.0",
    "OSI Approved :: ISC License (ISCL)": "ISC",
    "OSI Approved :: Python Software Foundation License": "PSF-2.0",
    "OSI Approved :: Mozilla Public License 2.0 (MPL 2.0)": "MPL-2.0",
    "OSI Approved :: Boost Software License 1.0 (BSL-1.0)": "BSL-1.0",
    "OSI Approved :: zlib/libpng License": "Zlib",
    "OSI Approved :: The Unlicense (Unlicense)": "Unlicense",
    "OSI Approved :: Historical Permission Notice and Disclaimer (HPND)": "HPND",
    "OSI Approved :: GNU General Public License v2 (GPLv2)": "GPL-2.0-only",
    "OSI Approved :: GNU General Public License v2 or later (GPLv2+)": "GPL-2.0-or-later",
    "OSI Approved :: GNU General Public License v3 (GPLv3)": "GPL-3.0-only",
    "OSI Approved :: GNU General Public License v3 or later (GPLv3+)": "GPL-3.0-or-later",
    "OSI Approved :: GNU Lesser General Public License v2 (LGPLv2)": "LGPL-2.0-only",
    "OSI Approved :: GNU Lesser General Public License v2 or later (LGPLv2+)": "LGPL-2.0-or-later",
    "OSI Approved :: GNU Lesser General Public License v3 (LGPLv3)": "LGPL-3.0-only",
    "OSI Approved :: GNU Lesser General Public License v3 or later (LGPLv3+)": "LGPL-3.0-or-later",
    # every LGPL version is GPL-3.0-compatible
    "OSI Approved :: GNU Library or Lesser General Public License (LGPL)": "LGPL-2.0-or-later",
    "CC0 1.0 Universal (CC0 1.0) Public Domain Dedication": "CC0-1.0",
    "Other/Proprietary License": "LicenseRef-Proprietary",
}
WORDS = {  # a free-text `License` field, lower case -> SPDX
    "apache 2.0": "Apache-2.0",
    "apache license 2.0": "Apache-2.0",
    "apache license, version 2.0": "Apache-2.0",
    "apache software license": "Apache-2.0",
    "bsd 3-clause license": "BSD-3-Clause",
    "isc license": "ISC",
    "mit license": "MIT",
    "the mit license (mit)": "MIT",
    "gplv2": "GPL-2.0-only",
    "gplv2+": "GPL-2.0-or-later",
    "gplv3": "GPL-3.0-only",
    "gplv3+": "GPL-3.0-or-later",
    "proprietary": "LicenseRef-Proprietary",
}
TEXTS = {  # a sentence only that licence's text holds -> SPDX (licence files, last resort)
    "permission is hereby granted, free of charge, to any person obtaining a copy": "MIT",
    "apache license version 2.0, january 2004": "Apache-2.0",
    "gnu general public license version 2, june 1991": "GPL-2.0-only",
    "gnu general public license version 3, 29 june 2007": "GPL-3.0-only",
    "permission to use, copy, modify, and/or distribute this software for any purpose": "ISC",
}

# Looked at by hand and let through while the question stays open: (name, version, what it
# declares) -> why. A new version, or a new declaration, is not covered: look at it again.
QUESTIONED = {
    ("pylibrb", "0.1.2", "GPL-2.0-only"): (
        "declares 'GPLv2' (License field and classifier) and ships the GPL-2.0 text, but says "
        "neither 'only' nor 'or later'; its bindings' sources carry no notice. The library it "
        "binds and bundles, Rubber Band, is GPL-2.0-or-later. GPL-2.0-only code cannot be "
        "combined with GPL-3.0 code: ask its author to state 'or later' (or to confirm "
        "GPL-2.0-or-later), else replace it (see NOTICE.md)"
    ),
}


def compatible(expression: str) -> bool:
    """Whether code under the SPDX `expression` may be combined with ours and distributed
    under GPL-3.0-or-later: `A OR B` takes either, `A AND B` needs both. An expression SPDX
    does not know (`proprietary`) is not."""
    try:
        tokens = re.findall(r"\(|\)|[^\s()]+", canonicalize_license_expression(expression))
    except InvalidLicenseExpression:
        return False

    def either(at: int) -> tuple[bool, int]:
        ok, at = both(at)
        while at < len(tokens) and tokens[at] == "OR":
            right, at = both(at + 1)
            ok = ok or right
        return ok, at

    def both(at: int) -> tuple[bool, int]:
        ok, at = one(at)
        while at < len(tokens) and tokens[at] == "AND":
            right, at = one(at + 1)
            ok = ok and right
        return ok, at

    def one(at: int) -> tuple[bool, int]:
        if tokens[at] == "(":
            ok, at = either(at + 1)
            return ok, at + 1  # past ")"
        ok = tokens[at] in COMPATIBLE
        at += 1
        if at < len(tokens) and tokens[at] == "WITH":
            ok, at = ok and tokens[at + 1] in EXCEPTIONS, at + 2
        return ok, at

    return either(0)[0]


def _spdx(text: str) -> str | None:
    """A short `License` field as SPDX: an expression already, or a name we know."""
    text = text.strip()
    if not text or "\n" in text or len(text) > 100:
        return None  # empty, or a whole licence text: the classifiers say it better
    try:
        return canonicalize_license_expression(text)
    except InvalidLicenseExpression:
        return WORDS.get(text.lower())


def declared_licence(metadata: email.message.Message, licence_texts: Iterable[str] = ()) -> str:
    """The SPDX expression a distribution's metadata declares ("" if it says nothing we can
    read; a classifier we cannot map becomes a LicenseRef, refused)."""
    expression = metadata.get("License-Expression")
    if expression:
        return expression
    found = []
    for classifier in metadata.get_all("Classifier") or []:
        name = classifier.removeprefix("License :: ")
        if name != classifier and name != "OSI Approved":
            found.append(CLASSIFIERS.get(name, "LicenseRef-Unknown-Classifier"))
    field = _spdx(metadata.get("License") or "")
    if field:
        found.append(field)
    if not found:  # nothing in the metadata: what its licence files are
        for text in licence_texts:
            flat = " ".join(text.lower().split())
            found += [spdx for sentence, spdx in TEXTS.items() if sentence in flat]
    unique = list(dict.fromkeys(found))
    return " AND ".join(f"({x})" if " OR " in x else x for x in unique)


def _licence_texts(dist: Distribution) -> list[str]:
    texts = []
    for name in dist.metadata.get_all("License-File") or []:
        text = dist.read_text(f"licenses/{name}") or dist.read_text(name)  # 2.4, or before
        if text:
            texts.append(text)
    return texts


def runtime_distributions() -> dict[str, Distribution]:
    """Every installed distribution the project's runtime dependencies reach."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    found: dict[str, Distribution] = {}
    followed: set[tuple[str, frozenset[str]]] = set()
    todo = [Requirement(d) for d in project["dependencies"]]
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        if (name, frozenset(requirement.extras)) in followed:
            continue
        followed.add((name, frozenset(requirement.extras)))
        try:
            dist = found.setdefault(name, distribution(requirement.name))
        except PackageNotFoundError:
            pytest.fail(f"{requirement.name} is required but not installed here")
        for raw in dist.requires or []:
            needed = Requirement(raw)
            extras = requirement.extras or {""}
            if needed.marker is None or any(needed.marker.evaluate({"extra": e}) for e in extras):
                todo.append(needed)
    return found


def test_every_runtime_dependency_is_gpl3_compatible() -> None:
    dists = runtime_distributions()
    assert {"pocket-tts", "discord-py", "torch", "pylibrb", "numpy"} <= set(dists)
    locked = set(
        re.findall(r"^([a-z0-9][\w.-]*)==", (REPO / "requirements.lock").read_text(), re.M)
    )
    assert locked <= set(dists), f"the image's lock holds unchecked {sorted(locked - set(dists))}"
    refused, questioned = [], set()
    for name, dist in sorted(dists.items()):
        licence = declared_licence(dist.metadata, _licence_texts(dist))  # type: ignore[arg-type]
        key = (name, dist.version, licence)
        if key in QUESTIONED:
            questioned.add(key)
            warnings.warn(f"{name} {dist.version} ({licence}): {QUESTIONED[key]}", stacklevel=1)
        elif not compatible(licence):
            refused.append(f"{name} {dist.version}: {licence or 'no licence found'}")
    assert not refused, "not GPL-3.0-compatible, or unknown:\n" + "\n".join(refused)
    assert questioned == set(QUESTIONED), "a questioned entry matches nothing installed now"


@pytest.mark.parametrize(
    "expression",
    [
        "GPL-2.0-only",
        "GPL-2.0",
        "proprietary",
        "LicenseRef-Proprietary",
        "AGPL-3.0-only",
        "CC-BY-NC-4.0",
        "EPL-2.0",
        "MIT AND GPL-2.0-only",
        "Apache-2.0 WITH Made-Up-exception",
        "",
        "not a licence",
    ],
)
def test_an_incompatible_or_unknown_licence_is_refused(expression: str) -> None:
    assert not compatible(expression)


@pytest.mark.parametrize(
    "expression",
    [
        "MIT",
        "mit",
        "BSD-3-Clause AND MIT",
        "GPL-2.0-only OR MIT",
        "(MIT OR GPL-2.0-only) AND ISC",
        "Apache-2.0 WITH LLVM-exception",
        "LGPL-2.1-or-later",
        "GPL-3.0-or-later",
        "MPL-2.0",
    ],
)
def test_a_compatible_licence_is_accepted(expression: str) -> None:
    assert compatible(expression)


def _metadata(**fields: str | list[str]) -> email.message.Message:
    message = email.message.Message()
    for key, value in fields.items():
        for one in [value] if isinstance(value, str) else value:
            message[key.replace("_", "-")] = one
    return message


def test_the_metadata_is_read_as_pip_writes_it() -> None:
    gpl2 = "License :: OSI Approved :: GNU General Public License v2 (GPLv2)"
    assert declared_licence(_metadata(License_Expression="MIT OR Apache-2.0")) == (
        "MIT OR Apache-2.0"
    )
    assert declared_licence(_metadata(License="GPLv2", Classifier=gpl2)) == "GPL-2.0-only"
    assert not compatible(declared_licence(_metadata(Classifier=gpl2)))
    assert not compatible(declared_licence(_metadata(License="Proprietary")))
    odd = _metadata(Classifier="License :: Freely Distributable")  # a classifier we do not map
    assert not compatible(declared_licence(odd))
    assert declared_licence(_metadata()) == ""  # says nothing: refused
    mit_text = "Permission is hereby granted, free of charge, to any\nperson obtaining a copy"
    assert declared_licence(_metadata(), [mit_text]) == "MIT"  # pocket-tts: its file alone
    both = _metadata(
        License="MIT OR Apache-2.0", Classifier=["License :: OSI Approved :: MIT License", gpl2]
    )
    assert declared_licence(both) == "MIT AND GPL-2.0-only AND (MIT OR Apache-2.0)"
    assert not compatible(declared_licence(both))
