"""Text agents: ``AIChannel``, a text model's own tool loop, human-input tools first.
"""
