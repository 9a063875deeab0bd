"""Tables, transactions and the operations that change them."""
