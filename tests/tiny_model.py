"""Build random-weight pocket-tts models offline (tests and benchmarks).

Hugging Face is unreachable here, so we take a config shipped with the installed package,
drop its weight paths (pocket-tts then keeps random weights: same architecture, same compute
cost) and point it at a SentencePiece tokenizer trained on generated sentences, padded to
the config's `n_bins` with user-defined symbols.
"""

from __future__ import annotations

import random
from pathlib import Path

import sentencepiece
import torch
import yaml

from bot.synthesis.clip import read_file
from bot.synthesis.pocket_tts_adapter import CONFIGS_DIR

_WORDS = (
    "the a an hello there world voice bot speak channel server message friend quick brown fox "
    "jumps over lazy dog today tomorrow music game play stream listen read write good bad "
    "small big fast slow cpu model sound audio time people talk chat join leave skip stop "
    "queue name emoji link code one two three four five six seven eight nine ten yes no "
    "please thanks sorry morning evening night weather rain sun cloud pizza coffee tea"
).split()


def train_tokenizer(out_dir: Path, n_bins: int, seed: int = 0) -> Path:
    """Train a SentencePiece model whose vocabulary size is exactly `n_bins`."""
    rng = random.Random(seed)
    corpus = out_dir / "corpus.txt"
    lines = []
    for _ in range(600):
        words = [rng.choice(_WORDS) for _ in range(rng.randint(3, 14))]
        lines.append(" ".join(words).capitalize() + rng.choice([".", "!", "?", ","]))
    lines.append("".join(chr(c) for c in range(32, 127)))
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    learned = 500  # 256 byte pieces, specials, and whole words of the corpus
    prefix = out_dir / "tokenizer"
    sentencepiece.SentencePieceTrainer.train(
        input=str(corpus),
        model_prefix=str(prefix),
        vocab_size=n_bins,
        user_defined_symbols=[f"<pad{i}>" for i in range(n_bins - learned)],
        byte_fallback=True,
        character_coverage=1.0,
        model_type="unigram",
        minloglevel=2,
    )
    model_path = prefix.with_suffix(".model")
    vocab = sentencepiece.SentencePieceProcessor(str(model_path)).vocab_size()
    if vocab != n_bins:
        raise RuntimeError(f"tokenizer vocabulary is {vocab}, expected {n_bins}")
    return model_path


def write_random_config(
    base: str, out_dir: Path, *, full_length: bool = False, tokenizer: Path | None = None
) -> Path:
    """Write `<out_dir>/<base>-random.yaml`: the packaged config `base` without weights.

    `full_length=True` disables end-of-speech detection so each text runs to its cap, as
    real speech of that length would (random weights otherwise stop after ~0.7 s).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    config = yaml.safe_load((CONFIGS_DIR / f"{base}.yaml").read_text())
    for key in ("weights_path", "weights_path_without_voice_cloning"):
        config.pop(key, None)
    config["flow_lm"].pop("weights_path", None)
    config["mimi"].pop("weights_path", None)
    table = config["flow_lm"]["lookup_table"]
    if tokenizer is None:
        tokenizer = train_tokenizer(out_dir, table["n_bins"])
    table["tokenizer"] = "sentencepiece"
    table["tokenizer_path"] = str(tokenizer)
    if full_length:
        config["default_eos_threshold"] = float("inf")
    suffix = "-full" if full_length else ""
    path = out_dir / f"{base}-random{suffix}.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def write_voice_state(config: Path, clip: Path, path: Path) -> Path:
    """Write `path`: the voice state of `clip` (a 24 kHz WAV) for a model of `config`'s
    architecture (its random weights are not any bot's: a voice of its own)."""
    from pocket_tts import TTSModel, export_model_state

    model = TTSModel.load_model(config=str(config))
    audio = torch.from_numpy(read_file(clip))[None, :]
    export_model_state(model.get_state_for_audio_prompt(audio), path)
    return path
