"""The responder: asking the person on a call aloud, and the risk tiers of a spoken yes.

``VoiceResponder`` speaks a request on a ``CallLine``, hears the answer (``Heard``),
understands it and weighs a confirmation against its risk tier.
"""
