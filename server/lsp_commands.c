// SPDX-License-Identifier: Apache-2.0
/*
 * lsp_commands.c — workspace/executeCommand: the commands of the code lenses
 * (lsp_symbols.c) served by the server, so any LSP client (Neovim, Helix, Emacs) can
 * run a lens, not only the VS Code extension, which runs them in its own UI.
 *
 *   {command: "stagd.showConvertedCode" | "stagd.showGraph", arguments: [{uri, function, ...}]}
 *
 * becomes the feature request stagd/convertedCode / stagd/graph with params
 * {textDocument: {uri}, function, ...} (the argument's other fields, such as format
 * or args, pass through), and its result is the command's result. The commands are
 * announced in `executeCommandProvider`, except those the client runs itself
 * (initializationOptions.clientCommands).
 */
#include <string.h>

#include "lsp_features.h"

static const struct {
  const char *command;
  const char *feature;
} commands[] = {
    {"stagd.showConvertedCode", "stagd/convertedCode"},
    {"stagd.showGraph", "stagd/graph"},
};

size_t sv_lsp_command_count(void) { return sizeof commands / sizeof commands[0]; }
const char *sv_lsp_command_at(size_t i) { return commands[i].command; }

const sv_lsp_feature *sv_lsp_command_params(const cJSON *params, cJSON **feature_params, sg_buf *why) {
  *feature_params = NULL;
  const cJSON *cmd = cJSON_IsObject(params) ? cJSON_GetObjectItemCaseSensitive(params, "command") : NULL;
  if (!cJSON_IsString(cmd)) {
    sg_buf_puts(why, "Invalid params: workspace/executeCommand needs params.command (a string)");
    return NULL;
  }
  const char *feature = NULL;
  for (size_t i = 0; i < sv_lsp_command_count(); i++)
    if (!strcmp(commands[i].command, cmd->valuestring)) feature = commands[i].feature;
  if (!feature) {
    sg_buf_printf(why, "Invalid params: unknown command '%s' (stagd serves stagd.showConvertedCode and "
                       "stagd.showGraph)",
                  cmd->valuestring);
    return NULL;
  }
  const cJSON *args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
  const cJSON *arg = cJSON_IsArray(args) && cJSON_GetArraySize(args) == 1 ? cJSON_GetArrayItem(args, 0) : NULL;
  const cJSON *uri = cJSON_IsObject(arg) ? cJSON_GetObjectItemCaseSensitive(arg, "uri") : NULL;
  if (!cJSON_IsString(uri)) {
    sg_buf_printf(why, "Invalid params: %s takes arguments [{uri, function}] (as its code lens gives them)",
                  cmd->valuestring);
    return NULL;
  }
  cJSON *p = cJSON_CreateObject();
  cJSON_AddStringToObject(cJSON_AddObjectToObject(p, "textDocument"), "uri", uri->valuestring);
  const cJSON *field;
  cJSON_ArrayForEach(field, arg) {
    if (strcmp(field->string, "uri") != 0) cJSON_AddItemToObject(p, field->string, cJSON_Duplicate(field, 1));
  }
  *feature_params = p;
  return sv_lsp_feature_by_name(feature);
}
