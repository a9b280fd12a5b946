"""Universal Sentence Encoder multilingual v3, memory's model, in pieces teamlore runs itself: its
tokenizer over only a query's pieces (`pieces`) and its network for one short text without numpy
(`forward`). models/multilingual.py loads the model and derives the copy both read."""
