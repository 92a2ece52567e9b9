"""The cold context (spec: DocStore): documents pruned from the window or committed by the
model, one JSON file each (`store`), and the model's tools over it (`tools`:
`coldcontext_query` brings documents back into the window, `coldcontext_commit`).
"""
