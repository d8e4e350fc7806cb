"""What `detect_language` costs and how sure it is (bot/text/language_detection.py).

Measures, in one run:
  build     building a detector for the offered languages (their n-gram models loaded), and
            the resident memory it added: two languages, then all seven;
  detect    the time to name a message's language (median, 95th percentile) at 200 and 2,000
            characters, as the bot runs it (the bot reads at most the first 400), and lingua on
            the whole 2,000 beside it (without the bound); the baseline is the text rendering
            of the same message in the same run (`speakable()`, what every read message costs);
  floor     on short chat lines in English, French, German and Spanish (the chat the floor is
            for): how many a floor names rightly, wrongly, or leaves to the server's language.

lingua keeps each language's models once per process: the seven's build loads the five the
two did not, and the memory it adds is theirs.

Measured on the 2-core machine beside other work (load 3-4), 2026-12-03, lingua 2.1.1:
  build  2 languages: 1.14 s, +61 MB;  7 languages: 1.71 s for the 5 more, +181 MB
  detect (english+french)  200 chars 0.13 ms, 2,000 chars 0.31 ms (lingua on all 2,000: 1.06 ms)
  rendering, same message  200 chars 0.79 ms, 2,000 chars 10.9 ms
  detect (seven)           200 chars 0.16 ms, 2,000 chars 0.37 ms
  floor 0.6 (english+french, 50 lines): 40 right, 1 wrong ("ok" as English), 9 left to the
  server's language; 0.5: 47 right, 3 wrong. Seven languages (70 lines): 0.6 36 right,
  1 wrong ("gg" as Italian), 33 left; 0.5 4 wrong.

Usage: .venv/bin/python bench/detect_language.py [--runs 200]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.text import language_detection
from bot.text.language_detection import LanguageDetection, lingua_language
from bot.text.words import Names, ReadOptions, speakable

SEVEN = ("english", "french", "german", "italian", "spanish", "portuguese", "dutch")
PARAGRAPH = (
    "Bonsoir à tous, je voulais vous dire que la partie de ce soir commence un peu plus tard "
    "que prévu, parce que notre ami n'est pas encore rentré du travail. On se retrouve vers "
    "21 h 30 dans le salon habituel ; apportez vos idées pour la prochaine campagne. "
)
CHAT = {  # short chat lines, as members write them ("ok" is in two: it is both)
    "english": [
        "ok",
        "lol",
        "gg",
        "yes",
        "no way",
        "let's go",
        "brb",
        "good night everyone",
        "I'm hungry",
        "what time is it",
        "that was a great game",
        "who wants to play tonight",
        "thanks a lot",
        "see you tomorrow",
        "can you hear me",
        "my mic is broken",
        "I'll be back in five minutes",
        "did you watch the match yesterday",
        "nice",
        "wait for me",
        "where are you",
        "haha that's funny",
        "I don't know",
        "sounds good to me",
        "the server is down again",
    ],
    "french": [
        "ok",
        "mdr",
        "oui",
        "non merci",
        "on y va",
        "bonne nuit tout le monde",
        "j'ai faim",
        "quelle heure est-il",
        "c'était une super partie",
        "qui veut jouer ce soir",
        "merci beaucoup",
        "à demain",
        "tu m'entends",
        "mon micro est cassé",
        "je reviens dans cinq minutes",
        "t'as vu le match hier",
        "trop bien",
        "attends-moi",
        "t'es où",
        "c'est drôle",
        "je sais pas",
        "ça me va",
        "le serveur est encore en panne",
        "salut",
        "bien joué",
    ],
    "german": [
        "ja",
        "gute Nacht zusammen",
        "ich habe Hunger",
        "wie spät ist es",
        "das war ein tolles Spiel",
        "wer will heute Abend spielen",
        "danke schön",
        "bis morgen",
        "hörst du mich",
        "mein Mikro ist kaputt",
    ],
    "spanish": [
        "sí",
        "buenas noches a todos",
        "tengo hambre",
        "qué hora es",
        "fue un gran partido",
        "quién quiere jugar esta noche",
        "muchas gracias",
        "hasta mañana",
        "me oyes",
        "mi micro está roto",
    ],
}
FLOORS = (0.4, 0.5, 0.6, 0.7, 0.8)


def resident_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def timed(work: object, runs: int) -> tuple[float, float]:
    """Median and 95th percentile of `work()`, in milliseconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()  # type: ignore[operator]
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


def build(languages: tuple[str, ...]) -> LanguageDetection:
    detection = LanguageDetection(languages)
    before, start = resident_mb(), time.perf_counter()
    detection.build()
    took = time.perf_counter() - start
    print(
        f"build  {len(languages)} languages: {took:5.2f} s, +{resident_mb() - before:.0f} MB "
        f"resident (now {resident_mb():.0f} MB)"
    )
    return detection


def cost(detection: LanguageDetection, runs: int) -> None:
    options = ReadOptions(language="french", max_length=2_000)
    detector = detection.build()
    for size in (200, 2_000):
        text = (PARAGRAPH * (size // len(PARAGRAPH) + 1))[:size]
        assert detection.detect(text) == "french"
        rows = [
            ("rendering (baseline)", lambda text=text: speakable(text, Names(), options)),
            ("detect (as the bot)", lambda text=text: detection.detect(text)),
        ]
        if size > language_detection.MAX_DETECTED_CHARS:
            rows.append(
                (
                    "lingua, whole text",
                    lambda text=text: detector.compute_language_confidence_values(text),
                )
            )
        for name, work in rows:
            median, p95 = timed(work, runs)
            print(f"  {size:>5,} chars  {name:<22} median {median:7.3f} ms   p95 {p95:7.3f} ms")


def floors(detection: LanguageDetection, offered: tuple[str, ...]) -> None:
    detector = detection.build()
    lines = [(lang, text) for lang, texts in CHAT.items() if lang in offered for text in texts]
    firsts = []
    for language, text in lines:
        top = detector.compute_language_confidence_values(text)[0]
        firsts.append((lingua_language(language) == top.language, top.value, text))
    print(f"floor  {', '.join(offered)}: {len(lines)} short lines")
    for floor in FLOORS:
        right = sum(ok and value >= floor for ok, value, _ in firsts)
        wrong = [text for ok, value, text in firsts if not ok and value >= floor]
        left = sum(value < floor for _, value, _ in firsts)
        mark = "  <- CONFIDENCE_FLOOR" if floor == language_detection.CONFIDENCE_FLOOR else ""
        print(
            f"  {floor:.1f}: right {right:2}  wrong {len(wrong):2}  server's language "
            f"{left:2}  wrong: {', '.join(wrong[:5])}{mark}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="timings per figure")
    args = parser.parse_args()
    print(f"resident at start: {resident_mb():.0f} MB")
    two = build(("english", "french"))
    cost(two, args.runs)
    floors(two, ("english", "french"))
    seven = build(SEVEN)
    cost(seven, args.runs)
    floors(seven, SEVEN)


if __name__ == "__main__":
    main()
