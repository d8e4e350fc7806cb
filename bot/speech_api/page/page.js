// The speech service's page: streams 24 kHz 16-bit PCM from /v1/audio/speech and plays each
// piece as it arrives (Web Audio), so speech starts before the rest is made. No library, no CDN.
"use strict";
const RATE = 24000;
const $ = (id) => document.getElementById(id);
// What the page did, for people (the figures) and for tests (window.speech).
const speech = (window.speech = {
  running: false, ended: false, decoded: 0, played: 0, playedAtEnd: 0,
  firstAudioMs: null, rtf: null, error: null, voice: null,
});
let audio = null, controller = null, startAt = 0, nextAt = 0, timer = null;

function headers() {
  const h = { "Content-Type": "application/json" };
  if ($("key").value) h.Authorization = "Bearer " + $("key").value;
  return h;
}

function fields(format) {
  return {
    model: "pocket-tts", input: $("text").value, voice: $("voice").value,
    language: $("language").value, speed: Number($("speed").value), response_format: format,
  };
}

function chosenClip() {
  const files = $("clip").files;
  return files && files.length ? files[0] : null;
}

// The request for `format`: JSON, or with a clip chosen a form with it as `voice_file` (the
// service speaks this one request in the clip's voice and keeps nothing)
function request(format) {
  const clip = chosenClip();
  if (!clip) return { method: "POST", headers: headers(), body: JSON.stringify(fields(format)) };
  const form = new FormData();
  for (const [name, value] of Object.entries(fields(format))) form.append(name, String(value));
  form.append("voice_file", clip, clip.name);
  const withoutType = headers();
  delete withoutType["Content-Type"];  // (the browser writes the form's, with its boundary)
  return { method: "POST", headers: withoutType, body: form };
}

async function refusal(response) {
  try {
    const error = (await response.json()).error;
    return { message: error.message, code: error.code };
  } catch { return { message: response.statusText, code: null }; }
}

async function failure(response) {
  return (await refusal(response)).message;
}

async function load() {
  const response = await fetch("/v1/audio/voices", { headers: headers() });
  if (!response.ok) {
    const { message, code } = await refusal(response);
    if (code === "invalid_api_key") {  // a key was sent, and it is not one of the service's
      $("key-row").hidden = false;
      $("status").textContent = "That API key was refused: " + message;
    } else {  // (a refused Host: no key helps, the service says what does)
      $("status").textContent = "The service refused this page: " + message;
    }
    return;
  }
  const info = await response.json();
  // the voices are listed without a key; speech needs one where the service has keys. The
  // field stays once a key is typed, so that it can be changed.
  $("key-row").hidden = !info.key_required && !$("key").value;
  $("status").textContent = info.key_required ? "This service needs an API key." : "";
  $("clip-row").hidden = !info.voice_clips;  // (only where the service can clone)
  $("voice").replaceChildren(...info.data.map((v) => new Option(
    v.kind === "operator" ? v.name + " (this server's)" : v.name, v.id)));
  $("language").replaceChildren(...info.languages.map((l) => new Option(l, l)));
  $("language").value = info.default_language;
}

function show() {
  if (audio && speech.running) speech.played = Math.max(0, Math.min(speech.decoded, audio.currentTime - startAt));
  $("decoded").textContent = speech.decoded.toFixed(1) + " s";
  $("played").textContent = speech.played.toFixed(1) + " s";
  $("first-audio").textContent = speech.firstAudioMs === null ? "–" : Math.round(speech.firstAudioMs) + " ms";
  $("rtf").textContent = speech.rtf === null ? "–" : speech.rtf.toFixed(2) + "×";
}

function play(samples) {
  const buffer = audio.createBuffer(1, samples.length, RATE);
  buffer.getChannelData(0).set(samples);
  const source = audio.createBufferSource();
  source.buffer = buffer;
  source.connect(audio.destination);
  if (nextAt < audio.currentTime + 0.05) nextAt = audio.currentTime + 0.05;  // a gap: start again
  if (speech.decoded === 0) startAt = nextAt;
  source.start(nextAt);
  nextAt += buffer.duration;
  speech.decoded += buffer.duration;
}

async function speak(event) {
  event.preventDefault();
  stop();
  Object.assign(speech, { running: true, ended: false, decoded: 0, played: 0, playedAtEnd: 0,
                          firstAudioMs: null, rtf: null, error: null, voice: null });
  audio = audio || new AudioContext();
  await audio.resume();
  controller = new AbortController();
  $("stop").disabled = false;
  $("status").textContent = "Speaking…";
  timer = setInterval(show, 100);
  const asked = performance.now();
  try {
    const response = await fetch("/v1/audio/speech", { ...request("pcm"), signal: controller.signal });
    if (!response.ok) throw new Error(await failure(response));
    speech.voice = response.headers.get("X-Voice");
    const reader = response.body.getReader();
    let rest = new Uint8Array(0);
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const bytes = new Uint8Array(rest.length + value.length);
      bytes.set(rest); bytes.set(value, rest.length);
      const whole = bytes.length - (bytes.length % 2);
      rest = bytes.slice(whole);
      if (!whole) continue;
      const pcm = new Int16Array(bytes.buffer.slice(0, whole));
      const samples = Float32Array.from(pcm, (s) => s / 32768);
      if (speech.firstAudioMs === null) speech.firstAudioMs = performance.now() - asked;
      play(samples);
      speech.rtf = speech.decoded / ((performance.now() - asked) / 1000);
    }
    show();
    speech.playedAtEnd = speech.played;
    $("status").textContent = "Done: " + speech.decoded.toFixed(1) + " s of speech.";
  } catch (error) {
    if (error.name !== "AbortError") {
      speech.error = String(error.message || error);
      $("status").textContent = "Could not speak: " + speech.error;
    }
  } finally {
    speech.ended = true;
    $("stop").disabled = true;
    const left = audio ? Math.max(0, (nextAt - audio.currentTime) * 1000) : 0;
    setTimeout(() => { speech.running = false; clearInterval(timer); show(); }, left);
  }
}

function stop() {
  if (controller) controller.abort();
  controller = null;
  if (audio) { audio.close(); audio = null; nextAt = 0; }
}

async function download(format, name) {
  $("status").textContent = "Making the file…";
  const response = await fetch("/v1/audio/speech", request(format));
  if (!response.ok) { $("status").textContent = "Could not make the file: " + await failure(response); return; }
  const link = $("download");
  link.href = URL.createObjectURL(await response.blob());
  link.download = name;
  link.click();
  $("status").textContent = "Saved " + name + ".";
}

$("form").addEventListener("submit", speak);
$("text").addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) $("form").requestSubmit(); });
$("stop").addEventListener("click", () => { stop(); $("status").textContent = "Stopped."; });
$("speed").addEventListener("input", () => { $("speed-shown").textContent = Number($("speed").value).toFixed(1) + "×"; });
$("wav").addEventListener("click", () => download("wav", "speech.wav"));
$("ogg").addEventListener("click", () => download("opus", "speech.ogg"));
$("key").addEventListener("change", load);
$("clip").addEventListener("change", () => { $("voice").disabled = chosenClip() !== null; });
load();
