CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
                     ordered_at TEXT NOT NULL, amount_cents INTEGER NOT NULL, status TEXT NOT NULL);
INSERT INTO customers VALUES (1, 'Ada Lovelace', 'UK'), (2, 'Grace Hopper', 'US'),
  (3, 'Alan Turing', 'UK'), (4, 'Edsger Dijkstra', 'NL'), (5, 'Barbara Liskov', 'US');
INSERT INTO orders VALUES
  (1, 1, '2024-01-15', 12000, 'paid'), (2, 1, '2024-06-02', 8050, 'paid'),
  (3, 2, '2024-03-11', 30000, 'paid'), (4, 2, '2023-12-30', 99900, 'paid'),
  (5, 3, '2024-07-21', 15000, 'refunded'), (6, 3, '2024-08-01', 9900, 'paid'),
  (7, 4, '2024-02-29', 25000, 'paid'), (8, 4, '2025-01-01', 50000, 'paid'),
  (9, 5, '2024-11-30', 19999, 'paid'), (10, 5, '2024-12-31', 1, 'paid');
