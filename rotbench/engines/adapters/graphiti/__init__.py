"""``graphiti`` and ``graphiti-current``: Graphiti's adapter,
its model seams and its paid-arm estimate."""
