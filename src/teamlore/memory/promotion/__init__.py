"""Promotion: from a quarantined candidate to reviewed Markdown in the repository.

`review` (what a person must see: statements, evidence, assessments), `prepare` (confirmed
statements → a PromotionPlan bound to digests), `queue` (the review queue with prepare's
previews), `apply` (promote: the journaled, crash-resumable write of a plan) and `discard`.
"""
