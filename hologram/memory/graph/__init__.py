"""Graph memory on SQLite: entities, facts with their history, and blocks of text and media.

`types` (what it takes and gives), `schema` (numbered migrations), `base` (the connection
and shared helpers), `blocks` (text and media blocks), `recall` (seeds and the walk), `edit`
(merge, edit, close, purge, delete), `store` (`GraphStore`, all of them together); above the
store, `indexer` (the prompt's "[Memory Index]"), `tools` (the model's graph tools) and
`social` (people, traits, relationships).
"""
