-- luademo: a tool and a stage handler, registered from Lua.
-- These calls are buffered while the script loads and take effect when the plugin starts.

sdk.register_tool("luademo_wordcount", "Count the words of a text.", {
  type = "object",
  properties = { text = { type = "string" } },
  required = { "text" },
}, function(args)
  local n = 0
  for _ in string.gmatch(args.text, "%S+") do n = n + 1 end
  return { words = n }
end)

-- before_output may change final_text: replies that go out get a small tag.
sdk.register_stage("before_output", function(ctx)
  if ctx.final_text ~= "" then
    ctx.final_text = ctx.final_text .. " [lua]"
  end
end)
