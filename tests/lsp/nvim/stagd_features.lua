-- SPDX-License-Identifier: Apache-2.0
-- stagd_features.lua — drives stagd's language features with Neovim's built-in LSP
-- client, headless (Neovim 0.7 and later): opens a Python buffer, waits for
-- publishDiagnostics, asks for document symbols, code lenses, a hover and
-- stagd/convertedCode, then edits the buffer (Neovim sends an incremental didChange)
-- into a syntax error and waits for the new diagnostics. Prints one line per step on
-- stdout; exits non-zero on failure.
--
-- Run: STAGD_BIN=/path/to/stagd nvim --headless -u NONE -c "luafile stagd_features.lua"

local u = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/testutil.lua')
local out, fail = u.out, u.fail

local SOURCE = {
  'LIMIT = 3',
  '',
  'def f(x):',
  '    if x > 0:',
  '        x = x - 1',
  '    return x',
  '',
  'class Model:',
  '    def step(self, a):',
  '        return a',
  '',
  'def gen():',
  '    yield 1',
}

local function run()
  local bin = os.getenv('STAGD_BIN')
  if bin == nil or bin == '' or vim.fn.executable(bin) ~= 1 then
    return fail('STAGD_BIN is not an executable: ' .. tostring(bin))
  end

  local published = {} -- version → diagnostics
  local exit_code = nil
  local client_id = vim.lsp.start_client({
    name = 'stagd',
    cmd = { bin, '--lsp', '--stdio' },
    root_dir = vim.fn.getcwd(),
    init_options = { debounceMs = 10 },
    handlers = {
      ['textDocument/publishDiagnostics'] = function(_, result)
        if result.version ~= nil then
          published[result.version] = result.diagnostics
        end
      end,
    },
    on_exit = function(code)
      exit_code = code
    end,
  })
  if client_id == nil then
    return fail('vim.lsp.start_client returned nil')
  end

  local path = vim.fn.tempname() .. '.py'
  local buf = vim.api.nvim_create_buf(true, false)
  vim.api.nvim_buf_set_name(buf, path)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, SOURCE)
  vim.api.nvim_buf_set_option(buf, 'filetype', 'python')
  vim.api.nvim_set_current_buf(buf)
  if not vim.lsp.buf_attach_client(buf, client_id) then
    return fail('buf_attach_client failed')
  end
  local client = nil
  if not vim.wait(10000, function()
    client = vim.lsp.get_client_by_id(client_id)
    return client ~= nil and client.initialized
  end, 10) then
    return fail('the client did not initialize')
  end

  -- the first publish (whatever version Neovim gave the opened buffer)
  local first = nil
  if not vim.wait(10000, function()
    first = next(published)
    return first ~= nil
  end, 10) then
    return fail('no publishDiagnostics after didOpen')
  end
  local diags = published[first]
  out('diagnostics ' .. #diags .. ' ' .. tostring(diags[1] and diags[1].code) .. ' line ' ..
      tostring(diags[1] and diags[1].range.start.line))

  local uri = vim.uri_from_bufnr(buf)
  local function request(method, params)
    local response, err = client.request_sync(method, params, 5000, buf)
    if response == nil then
      error(method .. ': ' .. tostring(err))
    end
    if response.err ~= nil then
      error(method .. ' error: ' .. vim.fn.json_encode(response.err))
    end
    return response.result
  end

  local syms = request('textDocument/documentSymbol', { textDocument = { uri = uri } })
  local names = {}
  for _, s in ipairs(syms) do
    local kids = {}
    for _, k in ipairs(s.children or {}) do
      table.insert(kids, k.name)
    end
    table.insert(names, s.name .. (#kids > 0 and ('(' .. table.concat(kids, ',') .. ')') or ''))
  end
  out('symbols ' .. table.concat(names, ' '))

  local lenses = request('textDocument/codeLens', { textDocument = { uri = uri } })
  local titles = {}
  for _, l in ipairs(lenses) do
    table.insert(titles, l.command.arguments[1]['function'] .. ':' .. l.command.command)
  end
  out('lenses ' .. table.concat(titles, ' '))

  local hover = request('textDocument/hover', { textDocument = { uri = uri }, position = { line = 3, character = 5 } })
  local first_line = vim.split(hover.contents.value, '\n')[3] or ''
  out('hover ' .. first_line)

  local converted = request('stagd/convertedCode', { textDocument = { uri = uri }, style = 'autograph' })
  out('convertedCode ' .. (converted.text:match('^# Converted by stagd') and 'header' or 'no header') .. ' map ' ..
      (#converted.sourceMap > 0 and 'yes' or 'no'))

  -- edit line 6 ("    return x") into "    return (x": Neovim sends an incremental change
  vim.api.nvim_buf_set_text(buf, 5, 11, 5, 11, { '(' })
  local version = vim.lsp.util.buf_versions[buf]
  if not vim.wait(10000, function() return published[version] ~= nil end, 10) then
    return fail('no diagnostics for version ' .. tostring(version))
  end
  local d = published[version][1]
  out('after edit ' .. #published[version] .. ' ' .. tostring(d and d.code) .. ' line ' ..
      tostring(d and d.range.start.line))

  client.stop()
  if not vim.wait(10000, function() return exit_code ~= nil end, 10) then
    return fail('stagd did not exit after shutdown/exit')
  end
  out('exit ' .. tostring(exit_code))
  if exit_code ~= 0 then
    return fail('stagd exit status ' .. tostring(exit_code))
  end
  out('OK')
  vim.cmd('qall!')
end

u.main(run)
