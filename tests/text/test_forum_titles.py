"""A forum post's title, read before its first message (`MessageFacts.title`), in each
language's own words."""

from __future__ import annotations

import pytest

from bot.text.phrasebook import PHRASEBOOKS as BOOKS
from bot.text.words import MAX_TITLE, MessageFacts, Names, ReadOptions, announce_both

POST = MessageFacts(content="Who is in?", author="Alice", title="Weekend plans")


def test_the_title_comes_first_and_the_author_is_named_once() -> None:
    named, unnamed = announce_both(POST, Names(), ReadOptions())
    assert named == "Alice posted: Weekend plans. Who is in?"
    assert unnamed == "new post: Weekend plans. Who is in?"


def test_a_post_with_only_a_file_or_nothing_but_its_title() -> None:
    image = MessageFacts(author="Alice", title="Look", attachment_types=("image/png",))
    assert (
        announce_both(image, Names(), ReadOptions())[0] == "Alice posted: Look. Alice sent an image"
    )
    bare = MessageFacts(content="...", author="Alice", title="Look")
    assert announce_both(bare, Names(), ReadOptions()) == ("Alice posted: Look", "new post: Look")


def test_a_title_is_made_speakable_and_bounded() -> None:
    emoji = MessageFacts(content="hi", author="Alice", title="🎉🎉")
    assert announce_both(emoji, Names(), ReadOptions(skip_emoji=True))[0] == "Alice said hi"
    long = MessageFacts(content="hi", author="Alice", title="word " * 100)
    named = announce_both(long, Names(), ReadOptions(max_length=2_000))[0]
    assert named.count("word") == MAX_TITLE // len("word ")


@pytest.mark.parametrize("language", sorted(BOOKS))
def test_each_language_says_it(language: str) -> None:
    named, unnamed = announce_both(POST, Names(), ReadOptions(language=language))
    book = BOOKS[language]
    assert named.startswith(book.posted.format(name="Alice", title="Weekend plans"))
    assert unnamed.startswith(book.new_post.format(title="Weekend plans"))
    assert named.endswith("Who is in?") and "{" not in named + unnamed
