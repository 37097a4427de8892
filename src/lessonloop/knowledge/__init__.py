"""Knowledge: entries, the one admission gate that writes them, search and Markdown views."""
