"""The context window (spec: RelevanceContext): the timeline the model sees (`context`),
durable through a journal, pruned by relevance to the current input into the cold context;
and the turn record it holds (`event`), which the cold context archives.
"""
