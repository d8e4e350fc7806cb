"""pocket-tts behind an async API: the engine, continuous batching, the deadline scheduler and
admission, the model pool, the phrase cache, clip decoding, the voice states and library, audio
files, and the one adapter holding every private pocket-tts name we touch. The only package that
imports torch or pocket-tts; it never imports discord."""
