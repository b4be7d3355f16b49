"""The demo and the replays: the code that runs calls on concrete providers.

``voice-hitl demo`` (a phone call, a meeting, over Twilio, in a Janus room, with an
operator) and the replays of recorded calls (through the demo's agents, or against
your own agent on a provider's loopback server; ``voice_hitl.recording`` re-exports
them). It uses the library as an application does and is the only part of
``voice_hitl`` that imports ``providers`` and ``conference``; the library's code
does not import it.
"""
