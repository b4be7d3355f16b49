// A WebRTC participant of a Janus AudioBridge room, run in headless Chromium next to Debian's
// janus.js (tests/webrtc_rig.py). Its microphone is a WebAudio graph: a silent source always
// connected (an open microphone: Chrome sends RTP, with the audio level, only while the track
// has a source); prepare(samples, rate) takes PCM16 and play(at) plays it into the microphone
// (from the epoch time ``at``, in ms, when given), resolving when it has played with how many
// seconds late it started (0 when on time).
"use strict";
window.adapter = {browserDetails: {browser: "chrome", version: 120}};  // what janus.js asks of adapter.js
window.joinRoom = (url, room, display) => new Promise((resolve, reject) => {
  const fail = (what) => (cause) => reject(new Error(what + ": " + JSON.stringify(cause)));
  Janus.init({
    debug: false,
    dependencies: Janus.useDefaultDependencies({adapter: window.adapter}),
    callback: () => {
      const janus = new Janus({server: url, error: fail("janus session"), success: () => {
        janus.attach({
          plugin: "janus.plugin.audiobridge",
          error: fail("attach"),
          success: (handle) => {
            window.handle = handle;
            handle.send({message: {request: "join", room: room, display: display}});
          },
          onmessage: (msg, jsep) => {
            if (msg.error) fail("join")(msg.error);
            if (msg.audiobridge === "joined" && msg.id && window.myId === undefined) {
              window.myId = String(msg.id);
              const ctx = new AudioContext({sampleRate: 48000});
              const mic = ctx.createMediaStreamDestination();
              const open = ctx.createConstantSource();
              open.offset.value = 0;
              open.connect(mic);
              open.start();
              window.voice = {ctx: ctx, mic: mic};
              window.handle.createOffer({
                tracks: [{type: "audio", capture: mic.stream.getAudioTracks()[0], recv: true}],
                success: (offer) => window.handle.send(
                  {message: {request: "configure", muted: false}, jsep: offer}),
                error: fail("offer"),
              });
            }
            if (jsep) window.handle.handleRemoteJsep({jsep: jsep});
          },
          webrtcState: (up, reason) => up ? resolve(window.myId) : fail("webrtc down")(reason),
        });
      }});
    },
  });
});
window.prepare = (samples, rate) => {  // the next utterance, decoded ahead of its start
  const {ctx} = window.voice;
  const buffer = ctx.createBuffer(1, samples.length, rate);
  const channel = buffer.getChannelData(0);
  for (let i = 0; i < samples.length; i++) channel[i] = samples[i] / 32768;
  window.voice.next = buffer;
  return true;
};
window.play = (at) => new Promise((resolve) => {  // at: epoch ms to start, or null: now
  const {ctx, mic, next} = window.voice;
  const source = ctx.createBufferSource();
  const ahead = at ? (at - Date.now()) / 1000 : 0;  // negative: the start time had passed
  source.buffer = next;
  source.connect(mic);
  source.onended = () => resolve(Math.max(0, -ahead));
  source.start(ctx.currentTime + Math.max(0, ahead));
});
