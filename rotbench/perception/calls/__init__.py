"""The client side of the model-backed arms: the Anthropic client, the call cache, the gate on calls
in flight, redaction, metered usage, Message Batches and the spending limit."""
