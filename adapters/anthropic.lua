-- Anthropic Messages API (POST {base_url}/v1/messages; base_url https://api.anthropic.com).
-- Wire format: https://docs.anthropic.com/en/api/messages and .../messages-streaming
-- The system prompt travels apart from the messages; tool calls are tool_use blocks in the
-- assistant turn and their results tool_result blocks in the following user turn.

local adapter = {
  name = "anthropic",
  version = "1.0.0",
  accepts_images = true, -- every Claude 3 and later model
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

-- The thinking blocks of an assistant turn go back first and unchanged (their signatures
-- prove them; a redacted_thinking block's data is opaque): the API requires them when the turn
-- made tool calls with thinking on. They travel as provider_data.thinking.
local function thinking_blocks(m)
  local blocks = json.array()
  for _, block in ipairs(((m.provider_data or {}).thinking) or {}) do
    if block.type == "redacted_thinking" then
      blocks[#blocks + 1] = { type = "redacted_thinking", data = block.data }
    elseif block.signature and block.signature ~= "" then
      blocks[#blocks + 1] = {
        type = "thinking", thinking = block.thinking or "", signature = block.signature,
      }
    end
  end
  return blocks
end

-- A tool's result is its text, or text and image blocks when the tool returned images
-- (tool_result content takes both).
local function result_content(content)
  if type(content) == "table" then
    for _, block in ipairs(content) do
      if block.type == "image" then return blocks_of(content) end
    end
  end
  return text_of(content)
end

local function message_blocks(m)
  if m.role == "tool" then
    return "user", json.array({
      {
        type = "tool_result",
        tool_use_id = m.tool_call_id,
        content = result_content(m.content),
        is_error = m.is_error or nil,
      },
    })
  end
  local blocks = (m.role == "assistant") and thinking_blocks(m) or json.array()
  for _, block in ipairs(blocks_of(m.content)) do blocks[#blocks + 1] = block end
  for _, call in ipairs(m.tool_calls or {}) do
    blocks[#blocks + 1] = {
      type = "tool_use", id = call.id, name = call.name, input = call.arguments or {},
    }
  end
  return m.role, blocks
end

local function wire_tools(tools)
  local out = json.array()
  for i, tool in ipairs(tools) do
    out[i] = {
      name = tool.name, description = tool.description, input_schema = tool.parameters,
    }
  end
  return out
end

-- The body fields of a tool set. The host calls this once per distinct set and adds its
-- answer to every request that carries the set; transform_request then gets no tools.
function adapter.transform_tools(raw)
  return { tools = wire_tools(json.decode(raw)) }
end

function adapter.transform_request(raw)
  local req = json.decode(raw)
  local max_tokens = req.max_tokens or DEFAULT_MAX_TOKENS
  local body = { model = req.model, max_tokens = max_tokens, messages = json.array() }
  local system = {}
  for _, m in ipairs(req.messages) do
    if m.role == "system" then
      system[#system + 1] = text_of(m.content)
    else
      local role, blocks = message_blocks(m)
      -- An empty turn ("content": []) is refused by the API: it is left out, and the turns
      -- around it join below.
      local last = body.messages[#body.messages]
      if #blocks == 0 then
        -- nothing to send
      elseif last and last.role == role then
        -- Turns alternate: consecutive messages of one role (several tool results, or a
        -- tool result followed by the user's next words) become one turn.
        for _, block in ipairs(blocks) do last.content[#last.content + 1] = block end
      else
        body.messages[#body.messages + 1] = { role = role, content = blocks }
      end
    end
  end
  if #system > 0 then body.system = table.concat(system, "\n\n") end
  if req.tools and #req.tools > 0 then body.tools = wire_tools(req.tools) end
  -- No temperature: the Messages API's request type (anthropic SDK 2.x) has no sampling
  -- parameters, and thinking refuses one. An older model that takes it gets it via extra.
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
  model_context_window_exceeded = "length",
  -- A long server-side tool run paused: the answer so far is what there is, cut short.
  pause_turn = "length",
  tool_use = "tool_calls",
  refusal = "content_filter",
}

local function finish_of(reason)
  if reason == nil or reason == json.null then return nil end
  return FINISH[reason] or reason
end

-- https://docs.anthropic.com/en/api/errors: the error type, then the words, name the kind.
local KINDS = {
  overloaded_error = "overloaded",
  rate_limit_error = "rate_limited",
  api_error = "server",
  authentication_error = "auth",
  permission_error = "auth",
  billing_error = "quota",
  request_too_large = "bad_request",
  not_found_error = "bad_request",
}

local function error_of(r)
  local e = type(r) == "table" and type(r.error) == "table" and r.error or {}
  local message = e.message or json.encode(r)
  local kind = KINDS[e.type]
  if e.type == "invalid_request_error" then
    local lower = string.lower(message)
    if lower:find("prompt is too long", 1, true) or lower:find("context window", 1, true) then
      kind = "context_length"
    elseif lower:find("credit balance", 1, true) then
      kind = "quota"
    else
      kind = "bad_request"
    end
  end
  return { kind = kind or "server", message = (e.type or "error") .. ": " .. message }
end

function adapter.transform_error(raw)
  local ok, r = pcall(json.decode, raw)
  if not ok or type(r) ~= "table" or r.type ~= "error" then return nil end
  return error_of(r)
end

local function usage_of(u)
  if type(u) ~= "table" then return nil end
  local read = u.cache_read_input_tokens or 0
  -- input_tokens leaves out what was read from or written to the cache.
  return {
    prompt_tokens = (u.input_tokens or 0) + read + (u.cache_creation_input_tokens or 0),
    completion_tokens = u.output_tokens,
    cached_tokens = read,
  }
end

function adapter.transform_response(raw)
  local r = json.decode(raw)
  if r.type == "error" then return { error = error_of(r) } end
  if type(r.content) ~= "table" then error("the response has no content blocks") end
  local texts, thoughts, calls, thinking = {}, {}, json.array(), json.array()
  for _, block in ipairs(r.content) do
    if block.type == "text" then
      texts[#texts + 1] = block.text
    elseif block.type == "thinking" then
      thoughts[#thoughts + 1] = block.thinking
      thinking[#thinking + 1] = {
        type = "thinking", thinking = block.thinking, signature = block.signature,
      }
    elseif block.type == "redacted_thinking" then
      thinking[#thinking + 1] = { type = "redacted_thinking", data = block.data }
    elseif block.type == "tool_use" then
      calls[#calls + 1] = { id = block.id, name = block.name, arguments = block.input }
    end
  end
  return {
    content = table.concat(texts),
    reasoning_content = table.concat(thoughts),
    finish_reason = finish_of(r.stop_reason),
    tool_calls = calls,
    token_usage = usage_of(r.usage),
    model = r.model,
    provider_data = (#thinking > 0) and { thinking = thinking } or nil,
  }
end

-- A piece of a thinking block of the stream, merged by index with the pieces before it.
local function thinking_piece(index, fields)
  fields.index = index
  return { thinking = json.array({ fields }) }
end

local function block_start(r)
  local block = r.content_block or {}
  if block.type == "tool_use" then
    return { tool_calls = json.array({
      { index = r.index, id = block.id, name = block.name, arguments = "" },
    }) }
  elseif block.type == "text" and block.text ~= "" then
    return { content = block.text }
  elseif block.type == "thinking" then
    local start = {
      type = "thinking", thinking = block.thinking or "", signature = block.signature or "",
    }
    return { reasoning_content = block.thinking, provider_data = thinking_piece(r.index, start) }
  elseif block.type == "redacted_thinking" then
    local redacted = { type = "redacted_thinking", data = block.data }
    return { provider_data = thinking_piece(r.index, redacted) }
  end
  return nil
end

local function block_delta(r)
  local delta = r.delta or {}
  if delta.type == "text_delta" then
    return { content = delta.text }
  elseif delta.type == "thinking_delta" then
    return {
      reasoning_content = delta.thinking,
      provider_data = thinking_piece(r.index, { thinking = delta.thinking }),
    }
  elseif delta.type == "signature_delta" then
    return { provider_data = thinking_piece(r.index, { signature = delta.signature }) }
  elseif delta.type == "input_json_delta" then
    return { tool_calls = json.array({ { index = r.index, arguments = delta.partial_json } }) }
  end
  return nil
end

-- One SSE data payload per call. Every payload names its event in "type", so the host can
-- skip the "event:" lines.
function adapter.transform_stream_chunk(line)
  local r = json.decode(line)
  local kind = r.type
  if kind == "message_start" then
    local message = r.message or {}
    return { model = message.model, token_usage = usage_of(message.usage) }
  elseif kind == "content_block_start" then
    return block_start(r)
  elseif kind == "content_block_delta" then
    return block_delta(r)
  elseif kind == "message_delta" then
    local usage = r.usage or {}
    return {
      finish_reason = finish_of((r.delta or {}).stop_reason),
      token_usage = { completion_tokens = usage.output_tokens },
    }
  elseif kind == "message_stop" then
    return { done = true }
  elseif kind == "error" then
    -- overloaded_error mid-stream is the provider's to retry, not a response we misread.
    return { error = error_of(r) }
  end
  return nil -- ping, content_block_stop, and event types added later
end

return adapter
