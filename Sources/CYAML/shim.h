// libyaml's event parser, for the YAML module's composer only; nothing else imports this.
#include <yaml.h>
