"""How a value's shape is declared: the pydantic configurations of the models at a boundary
(`strict`), and plain records for the modules a short command imports (`records`)."""
