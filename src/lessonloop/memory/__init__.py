"""Session memory for coding agents: hooks capture, memorize distils, recall brings back."""
