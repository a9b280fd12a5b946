"""Extraction: from indexed sessions to quarantined memory candidates.

`selection` (which sealed turns), `chunking` and `transcript` (bounded, marked transcript chunks),
`evidence` (the opaque evidence catalog and pointers), `typed_facts` (statements verified without
a model), `recall` (extraction tasks), `tasks` (task state), `staging` (drafts in), `dedup`
(recall-rrf@1 against approved and candidate memory) and `adjudication` (the agent's decisions).
"""
