-- Google Gemini API, generateContent
-- (POST {base_url}/models/{model}:generateContent; base_url
-- https://generativelanguage.googleapis.com/v1beta).
-- Wire format: https://ai.google.dev/api/generate-content
-- Streaming uses :streamGenerateContent?alt=sse: each SSE data payload is a whole
-- GenerateContentResponse holding the next piece, and the stream simply ends.

local adapter = {
  name = "gemini",
  version = "1.0.0",
  accepts_images = true,
  endpoint = "/models/{model}:generateContent",
  stream_endpoint = "/models/{model}:streamGenerateContent?alt=sse",
  headers = {},
  auth_header = "x-goog-api-key",
  auth_prefix = "",
  stream_format = "sse",
}

-- Gemini's Schema is an OpenAPI subset (https://ai.google.dev/api/caching#Schema): the API
-- refuses JSON-Schema-only keywords ($ref, $defs, const, oneOf, additionalProperties, type
-- lists...). A tool's schema is rewritten into that subset: references inlined, const made a
-- one-value enum, a "null" alternative made nullable, everything else unknown dropped.
local SCHEMA_KEYS = {
  type = true, format = true, title = true, description = true, nullable = true, enum = true,
  maxItems = true, minItems = true, properties = true, required = true, minProperties = true,
  maxProperties = true, minLength = true, maxLength = true, pattern = true, example = true,
  anyOf = true, propertyOrdering = true, default = true, items = true, minimum = true,
  maximum = true,
}
local MAX_DEPTH = 16 -- a recursive $ref is cut here instead of looping

local function resolve(ref, root)
  local node = root
  for piece in string.gmatch(string.gsub(ref, "^#/?", ""), "[^/]+") do
    piece = string.gsub(string.gsub(piece, "~1", "/"), "~0", "~")
    if type(node) ~= "table" then return nil end
    node = node[piece]
  end
  return node
end

local clean_schema

local function clean_alternatives(list, root, depth, out)
  local kept = json.array()
  for _, alternative in ipairs(list) do
    if type(alternative) == "table" and alternative.type == "null" then
      out.nullable = true
    else
      kept[#kept + 1] = clean_schema(alternative, root, depth + 1)
    end
  end
  if #kept == 1 then
    for key, value in pairs(kept[1]) do
      if out[key] == nil then out[key] = value end
    end
  elseif #kept > 1 then
    out.anyOf = kept
  end
end

clean_schema = function(schema, root, depth)
  if type(schema) ~= "table" then return schema end
  root, depth = root or schema, depth or 0
  if depth > MAX_DEPTH then return { type = "object" } end
  if type(schema["$ref"]) == "string" then
    local target = resolve(schema["$ref"], root)
    local out = clean_schema(target or { type = "object" }, root, depth + 1)
    if schema.description then out.description = schema.description end
    return out
  end
  local out = {}
  for key, value in pairs(schema) do
    if key == "properties" and type(value) == "table" then
      out.properties = {}
      for name, property in pairs(value) do
        out.properties[name] = clean_schema(property, root, depth + 1)
      end
    elseif key == "items" and type(value) == "table" and not json.is_array(value) then
      out.items = clean_schema(value, root, depth + 1)
    elseif key == "type" and type(value) == "table" then
      -- ["string", "null"]: one type, nullable
      for _, name in ipairs(value) do
        if name == "null" then out.nullable = true elseif out.type == nil then out.type = name end
      end
    elseif SCHEMA_KEYS[key] and key ~= "anyOf" then
      out[key] = value
    end
  end
  local alternatives = schema.anyOf or schema.oneOf
  if type(alternatives) == "table" then clean_alternatives(alternatives, root, depth, out) end
  if type(schema.allOf) == "table" then
    for _, part in ipairs(schema.allOf) do
      for key, value in pairs(clean_schema(part, root, depth + 1)) do
        if out[key] == nil then out[key] = value end
      end
    end
  end
  local values = out.enum
  if schema.const ~= nil then values = json.array({ schema.const }) end
  if values ~= nil then
    -- Gemini's enums are of strings: other values are kept in words, the type kept as it is.
    local strings, words = json.array(), {}
    for i, value in ipairs(values) do
      if type(value) == "string" then strings[#strings + 1] = value end
      words[i] = json.encode(value)
    end
    if #strings == #values then
      out.enum, out.type = strings, out.type or "string"
    else
      out.enum = nil
      local said = "one of " .. table.concat(words, ", ")
      out.description = out.description and (out.description .. " (" .. said .. ")") or said
    end
  end
  if type(out.required) == "table" and #out.required == 0 then out.required = nil end
  return out
end

-- Gemini gives function calls no id (or one of its own), and wants back, on each function
-- call part, the thoughtSignature it came with (Gemini 3 refuses a tool loop without it).
-- Each call gets an id made here, unique across turns, and provider_data keeps, by that id,
-- Gemini's own id and the signature: {calls = {[id] = {id = ..., signature = ...}}}.
local function new_call_id()
  return string.format("call_%08x%08x", math.random(0, 0x7fffffff), math.random(0, 0x7fffffff))
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

-- The images a tool returned travel inside its functionResponse, as its own parts
-- (FunctionResponsePart: inlineData, or fileData for one by URL).
local function response_media(content)
  if type(content) ~= "table" then return nil end
  local parts = json.array()
  for _, block in ipairs(content) do
    if block.type == "image" and block.data then
      parts[#parts + 1] = { inlineData = { mimeType = block.media_type, data = block.data } }
    elseif block.type == "image" then
      parts[#parts + 1] = { fileData = { mimeType = block.media_type, fileUri = block.url } }
    end
  end
  return (#parts > 0) and parts or nil
end

local function call_parts(m)
  local parts = parts_of(m.content)
  local data = m.provider_data or {}
  local known = data.calls or {}
  -- A signed answer without calls signs its last text part (not checked, but without it
  -- Gemini 3 reasons less well on the next turn).
  if data.text_signature and #parts > 0 and parts[#parts].text then
    parts[#parts].thoughtSignature = data.text_signature
  end
  for _, call in ipairs(m.tool_calls or {}) do
    local mine = known[call.id] or {}
    local fc = { name = call.name, args = call.arguments or {}, id = mine.id }
    parts[#parts + 1] = { functionCall = fc, thoughtSignature = mine.signature }
  end
  return parts
end

-- The id Gemini gave the call a tool message answers, if it gave one.
local function gemini_ids(messages)
  local ids = {}
  for _, m in ipairs(messages) do
    for call_id, mine in pairs(((m.provider_data or {}).calls) or {}) do ids[call_id] = mine.id end
  end
  return ids
end

local function wire_tools(tools)
  local declarations = json.array()
  for i, tool in ipairs(tools) do
    declarations[i] = {
      name = tool.name,
      description = tool.description,
      parameters = clean_schema(tool.parameters),
    }
  end
  return json.array({ { functionDeclarations = declarations } })
end

-- The body fields of a tool set. The host calls this once per distinct set and adds its
-- answer to every request that carries the set; transform_request then gets no tools.
function adapter.transform_tools(raw)
  return { tools = wire_tools(json.decode(raw)) }
end

function adapter.transform_request(raw)
  local req = json.decode(raw)
  local body = { contents = json.array() }
  local system = {}
  local ids = gemini_ids(req.messages)
  for _, m in ipairs(req.messages) do
    local role, parts
    if m.role == "system" then
      system[#system + 1] = { text = text_of(m.content) }
    elseif m.role == "tool" then
      role = "user"
      local key = m.is_error and "error" or "result"
      parts = json.array({
        {
          functionResponse = {
            id = ids[m.tool_call_id],
            name = m.name,
            response = { [key] = text_of(m.content) },
            parts = response_media(m.content),
          },
        },
      })
    elseif m.role == "assistant" then
      role = "model"
      parts = call_parts(m)
    else
      role = "user"
      parts = parts_of(m.content)
    end
    if role and #parts > 0 then
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
  if req.tools and #req.tools > 0 then body.tools = wire_tools(req.tools) end
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

-- google.rpc error details: RetryInfo's delay ("3s"), QuotaFailure's quota (a daily quota
-- is spent for the day, a per-minute one is a rate limit), ErrorInfo's reason.
local function error_of(e, http_status)
  if type(e) ~= "table" then return { kind = "server", message = tostring(e) } end
  local message = e.message or json.encode(e)
  local out = { message = (e.status or "") .. ": " .. message }
  local daily, per_period, reason = false, false, nil
  for _, detail in ipairs(e.details or {}) do
    local kind = tostring(detail["@type"] or "")
    if kind:find("RetryInfo", 1, true) and detail.retryDelay then
      out.retry_after = tonumber(string.match(tostring(detail.retryDelay), "^([%d.]+)s$"))
    elseif kind:find("QuotaFailure", 1, true) then
      for _, violation in ipairs(detail.violations or {}) do
        local id = tostring(violation.quotaId or "") .. tostring(violation.quotaMetric or "")
        if id:find("PerDay", 1, true) or id:find("per_day", 1, true) then
          daily = true
        else
          per_period = true
        end
      end
    elseif kind:find("ErrorInfo", 1, true) then
      reason = detail.reason
    end
  end
  local lower = string.lower(message)
  local refused = e.status == "PERMISSION_DENIED" or e.status == "UNAUTHENTICATED"
  if reason == "API_KEY_INVALID" or refused then
    out.kind = "auth"
  elseif e.status == "RESOURCE_EXHAUSTED" then
    -- A per-minute limit says "quota" and "billing" too: only a daily quota, or a refusal
    -- that names no limit and no delay, is a spent quota.
    local spent = daily or not (per_period or out.retry_after) and lower:find("billing", 1, true)
    out.kind = spent and "quota" or "rate_limited"
  elseif lower:find("token count", 1, true) and lower:find("exceeds", 1, true) then
    out.kind = "context_length"
  elseif e.status == "UNAVAILABLE" then
    out.kind = "overloaded"
  elseif http_status == nil then
    out.kind = "server" -- inside a stream
  end
  return out
end

function adapter.transform_error(raw, http)
  local ok, r = pcall(json.decode, raw)
  if not ok or type(r) ~= "table" or type(r.error) ~= "table" then return nil end
  local found = error_of(r.error, http.status)
  if not found.kind then return nil end -- the status says it all
  return found
end

local function read(r)
  if r.error then return { error = error_of(r.error, nil) } end
  local out = {
    content = "", reasoning_content = "", tool_calls = json.array(), model = r.modelVersion,
  }
  local candidate = r.candidates and r.candidates[1]
  if candidate then
    local texts, thoughts, calls, text_signature = {}, {}, {}, nil
    for _, part in ipairs((candidate.content or {}).parts or {}) do
      if part.functionCall then
        local fc = part.functionCall
        local id = new_call_id()
        out.tool_calls[#out.tool_calls + 1] = { id = id, name = fc.name, arguments = fc.args }
        calls[id] = { id = fc.id, signature = part.thoughtSignature }
      elseif part.text and part.thought then
        thoughts[#thoughts + 1] = part.text
      elseif part.text then
        texts[#texts + 1] = part.text
        -- in a stream, often an empty text part of its own at the end
        if part.thoughtSignature then text_signature = part.thoughtSignature end
      end
    end
    if #out.tool_calls > 0 then
      out.provider_data = { calls = calls }
    elseif text_signature then
      out.provider_data = { text_signature = text_signature }
    end
    out.content = table.concat(texts)
    out.reasoning_content = table.concat(thoughts)
    if candidate.finishReason then
      out.finish_reason = FINISH[candidate.finishReason] or string.lower(candidate.finishReason)
      if out.finish_reason == "stop" and #out.tool_calls > 0 then
        out.finish_reason = "tool_calls"
      end
    end
  elseif r.promptFeedback and r.promptFeedback.blockReason then
    out.finish_reason = "content_filter"
  end
  local usage = r.usageMetadata
  if usage then
    out.token_usage = {
      prompt_tokens = usage.promptTokenCount,
      -- candidatesTokenCount leaves the thoughts out; completion counts all that was generated
      completion_tokens = (usage.candidatesTokenCount or 0) + (usage.thoughtsTokenCount or 0),
      total_tokens = usage.totalTokenCount,
      reasoning_tokens = usage.thoughtsTokenCount,
      cached_tokens = usage.cachedContentTokenCount,
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
