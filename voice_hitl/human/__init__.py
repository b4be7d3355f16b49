"""The human-input primitive and its records.

``HumanInputHandler`` pauses one call until a person answers; ``PendingInput`` and the
lifecycle events record each request; deadline policies say what happens when nobody
answers; ``HumanInputToolHandler`` serves the tools that ask a person.
"""
