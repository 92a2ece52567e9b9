-- Anthropic Messages API (POST {base_url}/v1/messages; base_url https://api.anthropic.com).
-- Wire format: https://docs.anthropic.com/en/api/messages and .../messages-streaming
-- The system prompt travels apart from the messages; tool calls are tool_use blocks in the
-- assistant turn and their results tool_result blocks in the following user turn.

local adapter = {
  name = "anthropic",
  version = "1.0.0",
  endpoint = "/v1/messages",
  headers = { ["anthropic-version"] = "2023-06-01" },
  auth_header = "x-api-key",
  auth_prefix = "",
  stream_format = "sse",
}

local DEFAULT_MAX_TOKENS = 4096 -- the API requires max_tokens; used when the request has none

local function blocks_of(content)
  local blocks = json.array()
  if type(content) ~= "table" then
    if content and content ~= "" then blocks[1] = { type = "text", text = content } end
    return blocks
  end
  for _, block in ipairs(content) do
    if block.type == "text" and block.text ~= "" then
      blocks[#blocks + 1] = { type = "text", text = block.text }
    elseif block.type == "image" then
      local source
      if block.url then
        source = { type = "url", url = block.url }
      else
        source = { type = "base64", media_type = block.media_type, data = block.data }
      end
      blocks[#blocks + 1] = { type = "image", source = source }
    end
  end
  return blocks
end

local function text_of(content)
  if type(content) ~= "table" then return content or "" end
  local texts = {}
  for _, block in ipairs(content) do
    if block.type == "text" then texts[#texts + 1] = block.text end
  end
  return table.concat(texts)
end

function adapter.transform_request(raw)
  local req = json.decode(raw)
  local max_tokens = req.max_tokens or DEFAULT_MAX_TOKENS
  local body = { model = req.model, max_tokens = max_tokens, messages = json.array() }
  local system = {}
  for _, m in ipairs(req.messages) do
    local role, blocks
    if m.role == "system" then
      system[#system + 1] = text_of(m.content)
    elseif m.role == "tool" then
      role = "user"
      blocks = json.array({
        {
          type = "tool_result",
          tool_use_id = m.tool_call_id,
          content = text_of(m.content),
          is_error = m.is_error or nil,
        },
      })
    else
      role = m.role
      blocks = blocks_of(m.content)
      for _, call in ipairs(m.tool_calls or {}) do
        blocks[#blocks + 1] = {
          type = "tool_use", id = call.id, name = call.name, input = call.arguments or {},
        }
      end
    end
    if role then
      -- Turns alternate: consecutive messages of one role (several tool results, or a tool
      -- result followed by the user's next words) become one turn.
      local last = body.messages[#body.messages]
      if last and last.role == role then
        for _, block in ipairs(blocks) do last.content[#last.content + 1] = block end
      else
        body.messages[#body.messages + 1] = { role = role, content = blocks }
      end
    end
  end
  if #system > 0 then body.system = table.concat(system, "\n\n") end
  if req.tools and #req.tools > 0 then
    body.tools = json.array()
    for i, tool in ipairs(req.tools) do
      body.tools[i] = {
        name = tool.name, description = tool.description, input_schema = tool.parameters,
      }
    end
  end
  body.temperature = req.temperature
  if req.thinking then
    -- The thinking budget must stay below max_tokens and at least 1024.
    body.thinking = { type = "enabled", budget_tokens = math.max(1024, max_tokens // 2) }
    if body.max_tokens <= body.thinking.budget_tokens then
      body.max_tokens = body.thinking.budget_tokens + 1024
    end
  end
  if req.stream then body.stream = true end
  for key, value in pairs(req.extra or {}) do body[key] = value end
  return body
end

local FINISH = {
  end_turn = "stop",
  stop_sequence = "stop",
  max_tokens = "length",
  tool_use = "tool_calls",
  refusal = "content_filter",
}

local function finish_of(reason)
  if reason == nil then return nil end
  return FINISH[reason] or reason
end

local function api_error(r)
  local e = r.error or {}
  return (e.type or "error") .. ": " .. (e.message or json.encode(r))
end

function adapter.transform_response(raw)
  local r = json.decode(raw)
  if r.type == "error" then error("the API returned an error: " .. api_error(r)) end
  if type(r.content) ~= "table" then error("the response has no content blocks") end
  local texts, thoughts, calls = {}, {}, json.array()
  for _, block in ipairs(r.content) do
    if block.type == "text" then
      texts[#texts + 1] = block.text
    elseif block.type == "thinking" then
      thoughts[#thoughts + 1] = block.thinking
    elseif block.type == "tool_use" then
      calls[#calls + 1] = { id = block.id, name = block.name, arguments = block.input }
    end
  end
  local usage = r.usage or {}
  return {
    content = table.concat(texts),
    reasoning_content = table.concat(thoughts),
    finish_reason = finish_of(r.stop_reason),
    tool_calls = calls,
    token_usage = { prompt_tokens = usage.input_tokens, completion_tokens = usage.output_tokens },
    model = r.model,
  }
end

-- One SSE data payload per call. Every payload names its event in "type", so the host can
-- skip the "event:" lines.
function adapter.transform_stream_chunk(line)
  local r = json.decode(line)
  local kind = r.type
  if kind == "message_start" then
    local message = r.message or {}
    local usage = message.usage or {}
    return { model = message.model, token_usage = { prompt_tokens = usage.input_tokens } }
  elseif kind == "content_block_start" then
    local block = r.content_block or {}
    if block.type == "tool_use" then
      return { tool_calls = json.array({
        { index = r.index, id = block.id, name = block.name, arguments = "" },
      }) }
    elseif block.type == "text" and block.text ~= "" then
      return { content = block.text }
    end
    return nil
  elseif kind == "content_block_delta" then
    local delta = r.delta or {}
    if delta.type == "text_delta" then
      return { content = delta.text }
    elseif delta.type == "thinking_delta" then
      return { reasoning_content = delta.thinking }
    elseif delta.type == "input_json_delta" then
      return { tool_calls = json.array({ { index = r.index, arguments = delta.partial_json } }) }
    end
    return nil
  elseif kind == "message_delta" then
    local usage = r.usage or {}
    return {
      finish_reason = finish_of((r.delta or {}).stop_reason),
      token_usage = { completion_tokens = usage.output_tokens },
    }
  elseif kind == "message_stop" then
    return { done = true }
  elseif kind == "error" then
    error("the API returned an error: " .. api_error(r))
  end
  return nil -- ping, content_block_stop, and event types added later
end

return adapter
