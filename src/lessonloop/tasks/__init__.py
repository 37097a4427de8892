"""Agent tasks: data-only specs scored by a verifier and/or a judge, improved round by round."""
