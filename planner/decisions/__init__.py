"""What a plan decides: the verdict, the trim to a budget, the sensitivity, the ways the blockers
stop (unblock) and the headline figures."""
