"""Verifier: run the candidate query against the shop database and compare with the expected
rows. Exit 0 when they match; otherwise say what differs (the agent sees this feedback)."""

import sqlite3
import sys

EXPECTED = [("Grace Hopper", 300.0), ("Edsger Dijkstra", 250.0), ("Ada Lovelace", 200.5)]


def main(schema_path: str, query_path: str) -> int:
    db = sqlite3.connect(":memory:")
    db.executescript(open(schema_path, encoding="utf-8").read())
    query = open(query_path, encoding="utf-8").read().strip()
    if not query:
        print("the query is empty")
        return 1
    try:
        cursor = db.execute(query)
    except sqlite3.Error as exc:
        print(f"SQL error: {exc}")
        return 1
    columns = [c[0] for c in cursor.description or []]
    rows = [tuple(r) for r in cursor.fetchall()]
    if columns != ["name", "total_eur"]:
        print(f"expected columns ['name', 'total_eur'], got {columns}")
        return 1
    got = [(name, round(float(total), 2)) for name, total in rows]
    if got != EXPECTED:
        print(f"expected rows {EXPECTED}, got {got}")
        return 1
    print("query result matches")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
