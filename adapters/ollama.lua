-- Ollama native chat API (POST {base_url}/api/chat; base_url e.g. http://127.0.0.1:11434).
-- Wire format: https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion
-- Streaming is newline-delimited JSON, one object per line, the last with "done": true.

local adapter = {
  name = "ollama",
  version = "1.0.0",
  -- Most models Ollama serves read text only; a vision model (llava, qwen2.5vl, gemma3)
  -- is set per source (core.llm.sources.<name>.accepts_images = true).
  accepts_images = false,
  endpoint = "/api/chat",
  headers = {},
  stream_format = "ndjson",
}

local function split_content(content)
  if type(content) ~= "table" then return content or "", nil end
  local texts, images = {}, json.array()
  for _, block in ipairs(content) do
    if block.type == "text" then
      texts[#texts + 1] = block.text
    elseif block.type == "image" and block.data then
      images[#images + 1] = block.data
    elseif block.type == "image" then
      -- Ollama takes images inline only; failing the request would set the source aside
      -- for what is the conversation's matter, so the model is told in words.
      texts[#texts + 1] = "[an image at " .. tostring(block.url) .. ", not shown: this server takes images inline only]"
    end
  end
  return table.concat(texts), (#images > 0) and images or nil
end

local function wire_message(m)
  local text, images = split_content(m.content)
  local msg = { role = m.role, content = text, images = images }
  if m.role == "tool" then msg.tool_name = m.name end
  -- A thinking model's reasoning goes back with its turn, as Ollama's tool loops expect.
  if m.role == "assistant" and m.reasoning_content and m.reasoning_content ~= "" then
    msg.thinking = m.reasoning_content
  end
  if m.role == "assistant" and m.tool_calls and #m.tool_calls > 0 then
    msg.tool_calls = json.array()
    for i, call in ipairs(m.tool_calls) do
      msg.tool_calls[i] = { ["function"] = { name = call.name, arguments = call.arguments or {} } }
    end
  end
  return msg
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
  -- Ollama streams unless told not to, so "stream" is always sent.
  local body = { model = req.model, messages = json.array(), stream = req.stream and true or false }
  for i, m in ipairs(req.messages) do body.messages[i] = wire_message(m) end
  if req.tools and #req.tools > 0 then body.tools = wire_tools(req.tools) end
  -- num_ctx: the server's default window (2048 to 4096 tokens) cuts a longer prompt from the
  -- front without a word, so the window the kernel plans for is always asked for.
  body.options = {
    temperature = req.temperature, num_predict = req.max_tokens, num_ctx = req.context_window,
  }
  if next(body.options) == nil then body.options = nil end
  -- Only sent when asked for: models without a thinking mode reject "think".
  if req.thinking then body.think = true end
  for key, value in pairs(req.extra or {}) do body[key] = value end
  return body
end

local function calls_of(msg)
  local calls = json.array()
  for i, call in ipairs(msg.tool_calls or {}) do
    local fn = call["function"] or {}
    calls[i] = { id = call.id, name = fn.name, arguments = fn.arguments }
  end
  return calls
end

local function usage_of(r)
  if not r.done then return nil end
  return { prompt_tokens = r.prompt_eval_count, completion_tokens = r.eval_count }
end

local function finish_of(r, calls)
  if not r.done then return nil end
  if #calls > 0 then return "tool_calls" end
  return r.done_reason or "stop"
end

-- Ollama's errors are one line of text: a model that is not there, or the runner failing.
local function error_of(message)
  local text = tostring(message)
  local lower = string.lower(text)
  local kind = "server"
  if lower:find("not found", 1, true) then kind = "bad_request" end
  return { kind = kind, message = "ollama: " .. text }
end

function adapter.transform_response(raw)
  local r = json.decode(raw)
  if r.error then return { error = error_of(r.error) } end
  local msg = r.message
  if not msg then error("the response has no message") end
  local calls = calls_of(msg)
  return {
    content = msg.content,
    reasoning_content = msg.thinking,
    finish_reason = finish_of(r, calls),
    tool_calls = calls,
    token_usage = usage_of(r),
    model = r.model,
  }
end

function adapter.transform_stream_chunk(line)
  local r = json.decode(line)
  -- mid-stream: the runner failed, which is the server's, not a body misread
  if r.error then return { error = error_of(r.error) } end
  local msg = r.message or {}
  -- Ollama sends each tool call whole, so the calls carry no index: each is complete.
  local calls = calls_of(msg)
  return {
    content = msg.content,
    reasoning_content = msg.thinking,
    tool_calls = calls,
    finish_reason = finish_of(r, calls),
    token_usage = usage_of(r),
    done = r.done,
    model = r.model,
  }
end

return adapter
