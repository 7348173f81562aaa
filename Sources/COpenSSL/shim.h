// Only the EVP cipher interface: AESCCM uses OpenSSL's AES-128-CCM and nothing else from libcrypto.
#include <openssl/evp.h>
