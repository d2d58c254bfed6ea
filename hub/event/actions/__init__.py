"""What an operator action may do in this event and what it would replace or discard."""
