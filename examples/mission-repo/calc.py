"""A tiny module with a bug for `lessonloop mission` to fix."""


def total(n):
    """The sum of the whole numbers from 1 to n, both included."""
    return sum(range(1, n))
