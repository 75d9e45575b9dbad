"""``hindsight``: Hindsight (hindsight-api 1.1.0) over an embedded PostgreSQL (``engine``),
its model seams (``llm``), the PostgreSQL launcher (``postgres``) and its paid-arm estimate
(``estimate``)."""
