"""The memory heartbeats: independent loops on the kernel's clock (`loops`) that distill
rules from the conversation (`distill`), archive the cold context into the graph, and merge
and review the graph with the model's help (`consolidation` finds what to ask).
"""
