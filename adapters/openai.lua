-- OpenAI Chat Completions (POST {base_url}/chat/completions), and every server that speaks it.
-- Wire format: https://platform.openai.com/docs/api-reference/chat
-- The unified request and response this script translates are described in README.md.

local adapter = {
  name = "openai",
  version = "2.0.0",
  -- GPT-4o and later take images; a text-only model behind a compatible server is set
  -- per source (core.llm.sources.<name>.accepts_images = false).
  accepts_images = true,
  endpoint = "/chat/completions",
  headers = {},
  stream_format = "sse",
}

local function image_part(block)
  local url = block.url or ("data:" .. block.media_type .. ";base64," .. block.data)
  return { type = "image_url", image_url = { url = url } }
end

-- Text stays a string; a list of blocks becomes OpenAI content parts (images as URLs,
-- inline ones as data: URLs, which is how the API takes base64).
local function content_parts(content)
  if type(content) ~= "table" then return content or "" end
  local parts = json.array()
  for _, block in ipairs(content) do
    if block.type == "text" then
      parts[#parts + 1] = { type = "text", text = block.text }
    elseif block.type == "image" then
      parts[#parts + 1] = image_part(block)
    end
  end
  return parts
end

local function text_of(content)
  if type(content) ~= "table" then return content or "" end
  local texts = {}
  for _, block in ipairs(content) do
    if block.type == "text" then texts[#texts + 1] = block.text end
  end
  return table.concat(texts)
end

local function wire_message(m)
  if m.role == "tool" then
    return { role = "tool", tool_call_id = m.tool_call_id, content = text_of(m.content) }
  end
  if m.role == "assistant" then
    local msg = { role = "assistant", content = text_of(m.content) }
    if m.tool_calls and #m.tool_calls > 0 then
      -- The API wants null content beside tool calls when the model said nothing.
      if msg.content == "" then msg.content = json.null end
      msg.tool_calls = json.array()
      for i, call in ipairs(m.tool_calls) do
        msg.tool_calls[i] = {
          id = call.id,
          type = "function",
          ["function"] = { name = call.name, arguments = json.encode(call.arguments or {}) },
        }
      end
    end
    return msg
  end
  return { role = m.role, content = content_parts(m.content) }
end

-- A tool message is text only: the images a tool returned follow the run of tool messages
-- they belong to, in one user message whose text names the call each one answers.
local function tool_images(m, parts)
  if type(m.content) ~= "table" then return parts end
  local found = {}
  for _, block in ipairs(m.content) do
    if block.type == "image" then found[#found + 1] = image_part(block) end
  end
  if #found == 0 then return parts end
  parts = parts or json.array()
  local noun = (#found == 1) and "the image" or (#found .. " images")
  parts[#parts + 1] = {
    type = "text",
    text = "[" .. noun .. " returned by " .. tostring(m.name or "the tool") .. " (call "
      .. tostring(m.tool_call_id or "") .. ")]",
  }
  for _, part in ipairs(found) do parts[#parts + 1] = part end
  return parts
end

local function wire_messages(messages)
  local out, pending = json.array(), nil
  for _, m in ipairs(messages) do
    if m.role ~= "tool" and pending then
      out[#out + 1] = { role = "user", content = pending }
      pending = nil
    end
    out[#out + 1] = wire_message(m)
    if m.role == "tool" then pending = tool_images(m, pending) end
  end
  if pending then out[#out + 1] = { role = "user", content = pending } end
  return out
end

local function wire_tools(tools)
  local out = json.array()
  for i, tool in ipairs(tools) do
    out[i] = {
      type = "function",
      ["function"] = {
        name = tool.name, description = tool.description, parameters = tool.parameters,
      },
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
  local body = { model = req.model, messages = wire_messages(req.messages), stream = req.stream }
  if req.tools and #req.tools > 0 then body.tools = wire_tools(req.tools) end
  body.temperature = req.temperature
  -- max_tokens is deprecated (and refused by reasoning models); an older compatible server
  -- that wants it gets it through the request's extra.
  body.max_completion_tokens = req.max_tokens
  if req.stream then body.stream_options = { include_usage = true } end
  for key, value in pairs(req.extra or {}) do body[key] = value end
  return body
end

local function usage_of(u)
  if not u then return nil end
  local prompt = u.prompt_tokens_details or {}
  local completion = u.completion_tokens_details or {}
  return {
    prompt_tokens = u.prompt_tokens,
    completion_tokens = u.completion_tokens,
    total_tokens = u.total_tokens,
    reasoning_tokens = completion.reasoning_tokens,
    cached_tokens = prompt.cached_tokens,
  }
end

-- What an error body says, as {kind, message}: the code names a spent quota or a prompt
-- too long, which the status alone (429, 400) cannot tell apart from a rate limit or a bad
-- request.
local KINDS = {
  insufficient_quota = "quota",
  context_length_exceeded = "context_length",
  rate_limit_exceeded = "rate_limited",
  invalid_api_key = "auth",
  server_overloaded = "overloaded",
}

local function error_of(e, status)
  if type(e) ~= "table" then return { kind = "server", message = tostring(e) } end
  local kind = KINDS[e.code] or KINDS[e.type]
  local message = e.message or json.encode(e)
  if not kind and status == nil then kind = "server" end -- inside a stream: the server's
  return { kind = kind, message = message }
end
adapter.error_of = error_of

function adapter.transform_error(raw, http)
  local ok, r = pcall(json.decode, raw)
  if not ok or type(r) ~= "table" or r.error == nil then return nil end
  local found = error_of(r.error, http.status)
  if not found.kind then return nil end -- the status says it all
  found.retry_after = http.retry_after
  return found
end

function adapter.transform_response(raw)
  local r = json.decode(raw)
  if r.error then return { error = error_of(r.error, nil) } end
  local choice = r.choices and r.choices[1]
  if not choice then error("the response has no choices[1]") end
  local msg = choice.message or {}
  local calls = json.array()
  for i, call in ipairs(msg.tool_calls or {}) do
    local fn = call["function"] or {}
    calls[i] = { id = call.id, name = fn.name, arguments = fn.arguments }
  end
  local finish = choice.finish_reason
  local content = msg.content
  if msg.refusal and msg.refusal ~= json.null and (content == nil or content == "") then
    -- A refusal is the model's answer, not an empty one.
    content, finish = msg.refusal, "content_filter"
  end
  return {
    content = content,
    reasoning_content = msg.reasoning_content,
    finish_reason = finish,
    tool_calls = calls,
    token_usage = usage_of(r.usage),
    model = r.model,
  }
end

function adapter.transform_stream_chunk(line)
  if line == "[DONE]" then return { done = true } end
  local r = json.decode(line)
  if r.error then return { error = error_of(r.error, nil) } end
  local chunk = { token_usage = usage_of(r.usage), model = r.model }
  local choice = r.choices and r.choices[1]
  if choice then
    local delta = choice.delta or {}
    chunk.content = delta.content
    if delta.refusal and delta.refusal ~= json.null then
      chunk.content, chunk.finish_reason = delta.refusal, "content_filter"
    end
    chunk.reasoning_content = delta.reasoning_content
    chunk.finish_reason = chunk.finish_reason or choice.finish_reason
    if delta.tool_calls then
      chunk.tool_calls = json.array()
      for i, call in ipairs(delta.tool_calls) do
        local fn = call["function"] or {}
        -- Compatible servers often leave the index out: the host then joins the pieces
        -- by id (a new id starts a new call).
        chunk.tool_calls[i] = {
          index = call.index, id = call.id, name = fn.name, arguments = fn.arguments,
          fragment = true,
        }
      end
    end
  end
  return chunk
end

return adapter
