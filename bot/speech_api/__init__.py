"""The speech service: the engine as a local service, another way in beside the bot.

`./run.sh serve` runs it alone; the bot runs it too when SPEECH_PORT is set. Either way it
asks the one deadline scheduler for speech, after Discord's (bot/synthesis/scheduler.py):

- `openai_api`: OpenAI's `POST /v1/audio/speech` (streamed), `GET /v1/models`,
  `GET /v1/audio/voices`;
- `page`: the web page at `/`, which plays the speech as it is made;
- `wyoming_server`: Home Assistant's Wyoming protocol (WYOMING_PORT);
- `streams`: a request's speech as a scheduler job, within the service's limits (`limits`);
- `voices`: what the service may speak with: built-in voices and the operator's files,
  never a member's cloned voice;
- `encoders`: the audio formats, encoded as the audio comes;
- `server`: the HTTP server and its parts, started and closed together.
"""
