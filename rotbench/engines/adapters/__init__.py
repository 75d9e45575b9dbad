"""Adapters of peer engines: one subfolder per engine, holding its
adapter, its model seams and its paid-arm estimate (``langmem/``, ``hindsight/``)."""
