"""Read endpoints over what the kernel holds: the context window, the cold context, the graph
and the knowledge base.

They read through each subsystem's public face and change nothing the agent relies on, with
one exception said where it happens: a cold-context query counts as an access of each hit,
because `ColdContext.query` is the only ranked search it offers. A graph recall here goes to
the store itself, not the indexer, so it neither marks entities as recalled for the next
turn nor replaces the indexer's last recall.
"""
