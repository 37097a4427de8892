"""The verifier: `python3 test_calc.py` exits 0 only when calc.total is right."""

import unittest

from calc import total


class TotalTest(unittest.TestCase):
    def test_small(self):
        self.assertEqual(total(1), 1)
        self.assertEqual(total(3), 6)

    def test_ten(self):
        self.assertEqual(total(10), 55)


if __name__ == "__main__":
    unittest.main()
