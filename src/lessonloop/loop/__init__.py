"""The generation loop: context, attempt, paired tournament, gate, reflection, persistence."""
