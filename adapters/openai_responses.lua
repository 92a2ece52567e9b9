-- OpenAI Responses API (POST {base_url}/responses; base_url https://api.openai.com/v1).
-- Wire format: https://platform.openai.com/docs/api-reference/responses
-- The conversation is a list of input items: messages, function_call items for the model's
-- calls and function_call_output items for their results; the system prompt travels as
-- `instructions`. Nothing is stored on OpenAI's side (store = false): each request carries
-- the whole conversation, as with Chat Completions.

local adapter = {
  name = "openai_responses",
  version = "1.0.0",
  accepts_images = true,
  endpoint = "/responses",
  headers = {},
  stream_format = "sse",
}

local function text_of(content)
  if type(content) ~= "table" then return content or "" end
  local texts = {}
  for _, block in ipairs(content) do
    if block.type == "text" then texts[#texts + 1] = block.text end
  end
  return table.concat(texts)
end

local function input_parts(content)
  local parts = json.array()
  if type(content) ~= "table" then
    parts[1] = { type = "input_text", text = content or "" }
    return parts
  end
  for _, block in ipairs(content) do
    if block.type == "text" then
      parts[#parts + 1] = { type = "input_text", text = block.text }
    elseif block.type == "image" then
      local url = block.url or ("data:" .. block.media_type .. ";base64," .. block.data)
      parts[#parts + 1] = { type = "input_image", image_url = url, detail = "auto" }
    end
  end
  return parts
end

-- A function call's output is its text, or a list of input_text and input_image parts
-- when the tool returned images (the API takes both).
local function call_output(content)
  if type(content) == "table" then
    for _, block in ipairs(content) do
      if block.type == "image" then return input_parts(content) end
    end
  end
  return text_of(content)
end

local function add_items(items, m)
  if m.role == "tool" then
    items[#items + 1] = {
      type = "function_call_output", call_id = m.tool_call_id, output = call_output(m.content),
    }
  elseif m.role == "assistant" then
    -- Reasoning items first, as the model wrote them: with nothing stored on OpenAI's side,
    -- their encrypted content is how a reasoning model keeps its thread through a tool loop.
    for _, item in ipairs(((m.provider_data or {}).reasoning) or {}) do
      items[#items + 1] = {
        type = "reasoning", id = item.id, summary = item.summary or json.array(),
        encrypted_content = item.encrypted_content,
      }
    end
    local text = text_of(m.content)
    if text ~= "" then items[#items + 1] = { role = "assistant", content = text } end
    for _, call in ipairs(m.tool_calls or {}) do
      items[#items + 1] = {
        type = "function_call",
        call_id = call.id,
        name = call.name,
        arguments = json.encode(call.arguments or {}),
      }
    end
  else
    items[#items + 1] = { role = m.role, content = input_parts(m.content) }
  end
end

local function wire_tools(tools)
  local out = json.array()
  for i, tool in ipairs(tools) do
    -- strict = false: strict mode demands every property required and no extra keys.
    out[i] = {
      type = "function", name = tool.name, description = tool.description,
      parameters = tool.parameters, strict = false,
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
  local body = { model = req.model, input = json.array(), store = false }
  local system = {}
  for _, m in ipairs(req.messages) do
    if m.role == "system" then
      system[#system + 1] = text_of(m.content)
    else
      add_items(body.input, m)
    end
  end
  if #system > 0 then body.instructions = table.concat(system, "\n\n") end
  if req.tools and #req.tools > 0 then body.tools = wire_tools(req.tools) end
  body.temperature = req.temperature
  body.max_output_tokens = req.max_tokens
  if req.thinking then
    body.reasoning = { summary = "auto" }
    body.include = json.array({ "reasoning.encrypted_content" })
  end
  if req.stream then body.stream = true end
  for key, value in pairs(req.extra or {}) do body[key] = value end
  return body
end

local KINDS = {
  insufficient_quota = "quota",
  context_length_exceeded = "context_length",
  rate_limit_exceeded = "rate_limited",
  invalid_api_key = "auth",
  server_overloaded = "overloaded",
  server_error = "server",
}

local function error_of(e, status)
  if type(e) ~= "table" then return { kind = "server", message = tostring(e) } end
  local kind = KINDS[e.code] or KINDS[e.type]
  if not kind and status == nil then kind = "server" end -- inside a stream: the server's
  return { kind = kind, message = e.message or json.encode(e) }
end

function adapter.transform_error(raw, http)
  local ok, r = pcall(json.decode, raw)
  if not ok or type(r) ~= "table" or type(r.error) ~= "table" then return nil end
  local found = error_of(r.error, http.status)
  if not found.kind then return nil end -- the status says it all
  return found
end

local function usage_of(u)
  if type(u) ~= "table" then return nil end
  return {
    prompt_tokens = u.input_tokens,
    completion_tokens = u.output_tokens,
    total_tokens = u.total_tokens,
    cached_tokens = (u.input_tokens_details or {}).cached_tokens,
    reasoning_tokens = (u.output_tokens_details or {}).reasoning_tokens,
  }
end

local function finish_of(r, calls)
  if r.status == "incomplete" then
    local reason = (r.incomplete_details or {}).reason
    return reason == "content_filter" and "content_filter" or "length"
  end
  return #calls > 0 and "tool_calls" or "stop"
end

local function reasoning_item(item)
  return { id = item.id, summary = item.summary, encrypted_content = item.encrypted_content }
end

local function read(r)
  if r.error and r.error ~= json.null then return { error = error_of(r.error, nil) } end
  local texts, thoughts, calls, reasoning = {}, {}, json.array(), json.array()
  for _, item in ipairs(r.output or {}) do
    if item.type == "message" then
      for _, part in ipairs(item.content or {}) do
        if part.type == "output_text" then texts[#texts + 1] = part.text end
        if part.type == "refusal" then texts[#texts + 1] = part.refusal end
      end
    elseif item.type == "reasoning" then
      for _, part in ipairs(item.summary or {}) do thoughts[#thoughts + 1] = part.text end
      reasoning[#reasoning + 1] = reasoning_item(item)
    elseif item.type == "function_call" then
      calls[#calls + 1] = { id = item.call_id, name = item.name, arguments = item.arguments }
    end
  end
  return {
    content = table.concat(texts),
    reasoning_content = table.concat(thoughts, "\n"),
    finish_reason = finish_of(r, calls),
    tool_calls = calls,
    token_usage = usage_of(r.usage),
    model = r.model,
    provider_data = (#reasoning > 0) and { reasoning = reasoning } or nil,
  }
end

function adapter.transform_response(raw)
  local r = json.decode(raw)
  if r.error and r.error ~= json.null then return { error = error_of(r.error, nil) } end
  if type(r.output) ~= "table" then error("the response has no output items") end
  return read(r)
end

-- Streamed events name themselves in "type". Text and reasoning arrive as deltas; a function
-- call is announced by output_item.added and its arguments follow as deltas of that output
-- index; response.completed carries the usage and the finish.
function adapter.transform_stream_chunk(line)
  local e = json.decode(line)
  local kind = e.type
  if kind == "response.output_text.delta" or kind == "response.refusal.delta" then
    return { content = e.delta }
  elseif kind == "response.reasoning_summary_text.delta"
    or kind == "response.reasoning_text.delta" then
    return { reasoning_content = e.delta }
  elseif kind == "response.output_item.added" and (e.item or {}).type == "function_call" then
    return { tool_calls = json.array({
      { index = e.output_index, id = e.item.call_id, name = e.item.name, arguments = "" },
    }) }
  elseif kind == "response.output_item.done" and (e.item or {}).type == "reasoning" then
    return { provider_data = { reasoning = json.array({ reasoning_item(e.item) }) } }
  elseif kind == "response.function_call_arguments.delta" then
    return { tool_calls = json.array({ { index = e.output_index, arguments = e.delta } }) }
  elseif kind == "response.completed" or kind == "response.incomplete" then
    local r = e.response or {}
    local whole = read(r)
    return {
      finish_reason = whole.finish_reason == "tool_calls" and "stop" or whole.finish_reason,
      token_usage = whole.token_usage,
      model = r.model,
      done = true,
    }
  elseif kind == "response.failed" then
    return { error = error_of(((e.response or {}).error) or {}, nil) }
  elseif kind == "error" then
    return { error = error_of(e, nil) }
  end
  return nil
end

return adapter
