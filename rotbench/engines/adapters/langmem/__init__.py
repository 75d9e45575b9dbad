"""``langmem`` and ``langmem-deletes``: LangMem 0.0.30 (``engine``), its chat models
(``chat``) and its paid-arm estimate (``estimate``)."""
