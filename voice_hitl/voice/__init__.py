"""The realtime voice channel, its driver, its line and its transports.

``RealtimeVoiceChannel`` runs one provider session per caller through ``SessionDriver``;
the realtime provider interface and its events, wire taps, connect hooks, reasoning
backends, the voice call line, audio transports and PCM16 helpers live here.
"""
