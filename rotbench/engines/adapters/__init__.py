"""Adapters of peer engines added since issue 41: one subfolder per engine, holding its
adapter, its model seams and its paid-arm estimate (``langmem/``, ``hindsight/``)."""
