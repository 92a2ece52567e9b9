-- Google Gemini API, generateContent
-- (POST {base_url}/models/{model}:generateContent; base_url
-- https://generativelanguage.googleapis.com/v1beta).
-- Wire format: https://ai.google.dev/api/generate-content
-- Streaming uses :streamGenerateContent?alt=sse: each SSE data payload is a whole
-- GenerateContentResponse holding the next piece, and the stream simply ends.

local adapter = {
  name = "gemini",
  version = "1.0.0",
  endpoint = "/models/{model}:generateContent",
  stream_endpoint = "/models/{model}:streamGenerateContent?alt=sse",
  headers = {},
  auth_header = "x-goog-api-key",
  auth_prefix = "",
  stream_format = "sse",
}

-- Gemini's Schema is an OpenAPI subset: JSON-Schema-only keywords are refused, so drop them.
local UNSUPPORTED = { ["$schema"] = true, additionalProperties = true }

local function clean_schema(schema)
  if type(schema) ~= "table" then return schema end
  local out = json.is_array(schema) and json.array() or {}
  for key, value in pairs(schema) do
    if not UNSUPPORTED[key] then out[key] = clean_schema(value) end
  end
  return out
end

local function parts_of(content)
  local parts = json.array()
  if type(content) ~= "table" then
    if content and content ~= "" then parts[1] = { text = content } end
    return parts
  end
  for _, block in ipairs(content) do
    if block.type == "text" then
      parts[#parts + 1] = { text = block.text }
    elseif block.type == "image" and block.data then
      parts[#parts + 1] = { inlineData = { mimeType = block.media_type, data = block.data } }
    elseif block.type == "image" then
      parts[#parts + 1] = { fileData = { mimeType = block.media_type, fileUri = block.url } }
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

function adapter.transform_request(raw)
  local req = json.decode(raw)
  local body = { contents = json.array() }
  local system = {}
  for _, m in ipairs(req.messages) do
    local role, parts
    if m.role == "system" then
      system[#system + 1] = { text = text_of(m.content) }
    elseif m.role == "tool" then
      role = "user"
      local key = m.is_error and "error" or "result"
      parts = json.array({
        { functionResponse = { name = m.name, response = { [key] = text_of(m.content) } } },
      })
    elseif m.role == "assistant" then
      role = "model"
      parts = parts_of(m.content)
      for _, call in ipairs(m.tool_calls or {}) do
        parts[#parts + 1] = { functionCall = { name = call.name, args = call.arguments or {} } }
      end
    else
      role = "user"
      parts = parts_of(m.content)
    end
    if role then
      -- Several tool results answer one model turn: they go back together in one turn.
      local last = body.contents[#body.contents]
      if last and last.role == role then
        for _, part in ipairs(parts) do last.parts[#last.parts + 1] = part end
      else
        body.contents[#body.contents + 1] = { role = role, parts = parts }
      end
    end
  end
  if #system > 0 then body.systemInstruction = { parts = json.array(system) } end
  if req.tools and #req.tools > 0 then
    local declarations = json.array()
    for i, tool in ipairs(req.tools) do
      declarations[i] = {
        name = tool.name,
        description = tool.description,
        parameters = clean_schema(tool.parameters),
      }
    end
    body.tools = json.array({ { functionDeclarations = declarations } })
  end
  local config = { temperature = req.temperature, maxOutputTokens = req.max_tokens }
  if req.thinking then config.thinkingConfig = { includeThoughts = true } end
  if next(config) then body.generationConfig = config end
  for key, value in pairs(req.extra or {}) do body[key] = value end
  return body
end

local FINISH = {
  STOP = "stop",
  MAX_TOKENS = "length",
  SAFETY = "content_filter",
  RECITATION = "content_filter",
  BLOCKLIST = "content_filter",
  PROHIBITED_CONTENT = "content_filter",
  SPII = "content_filter",
}

local function read(r)
  if r.error then
    error("the API returned an error: " .. (r.error.status or "") .. " " ..
      (r.error.message or json.encode(r.error)))
  end
  local out = { content = "", reasoning_content = "", tool_calls = json.array(), model = r.modelVersion }
  local candidate = r.candidates and r.candidates[1]
  if candidate then
    local texts, thoughts = {}, {}
    for _, part in ipairs((candidate.content or {}).parts or {}) do
      if part.functionCall then
        local fc = part.functionCall
        out.tool_calls[#out.tool_calls + 1] = { id = fc.id, name = fc.name, arguments = fc.args }
      elseif part.text and part.thought then
        thoughts[#thoughts + 1] = part.text
      elseif part.text then
        texts[#texts + 1] = part.text
      end
    end
    out.content = table.concat(texts)
    out.reasoning_content = table.concat(thoughts)
    if candidate.finishReason then
      out.finish_reason = FINISH[candidate.finishReason] or string.lower(candidate.finishReason)
      if out.finish_reason == "stop" and #out.tool_calls > 0 then out.finish_reason = "tool_calls" end
    end
  elseif r.promptFeedback and r.promptFeedback.blockReason then
    out.finish_reason = "content_filter"
  end
  local usage = r.usageMetadata
  if usage then
    out.token_usage = {
      prompt_tokens = usage.promptTokenCount,
      completion_tokens = usage.candidatesTokenCount,
      total_tokens = usage.totalTokenCount,
      reasoning_tokens = usage.thoughtsTokenCount,
    }
  end
  return out
end

function adapter.transform_response(raw)
  local r = json.decode(raw)
  if not r.error and not r.candidates and not r.promptFeedback then
    error("the response has neither candidates nor promptFeedback")
  end
  return read(r)
end

-- Gemini sends each function call whole, so stream calls carry no index.
function adapter.transform_stream_chunk(line)
  return read(json.decode(line))
end

return adapter
