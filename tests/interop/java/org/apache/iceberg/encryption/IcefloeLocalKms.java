package org.apache.iceberg.encryption;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.JsonNode;
import org.apache.iceberg.util.JsonUtil;

/**
 * icefloe's local KMS as a Java {@link KeyManagementClient}: master keys from the same JSON keys
 * file (key id to base64 key), keys wrapped as AES-GCM under the master key with no AAD, in
 * Iceberg's {@link Ciphers} (nonce | ciphertext | tag), as Iceberg's own test KMS does.
 */
public class IcefloeLocalKms implements KeyManagementClient {
  private final Map<String, byte[]> keys = new HashMap<>();

  @Override
  public void initialize(Map<String, String> properties) {
    String path = properties.get("encryption.kms.local.keys-file");
    try {
      JsonNode root = JsonUtil.mapper().readTree(new File(path));
      for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> entry = it.next();
        keys.put(entry.getKey(), Base64.getDecoder().decode(entry.getValue().asText()));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private byte[] master(String keyId) {
    byte[] key = keys.get(keyId);
    if (key == null) {
      throw new IllegalArgumentException("no master key " + keyId);
    }
    return key;
  }

  @Override
  public ByteBuffer wrapKey(ByteBuffer key, String wrappingKeyId) {
    byte[] plain = new byte[key.remaining()];
    key.duplicate().get(plain);
    return ByteBuffer.wrap(new Ciphers.AesGcmEncryptor(master(wrappingKeyId)).encrypt(plain, null));
  }

  @Override
  public ByteBuffer unwrapKey(ByteBuffer wrappedKey, String wrappingKeyId) {
    byte[] wrapped = new byte[wrappedKey.remaining()];
    wrappedKey.duplicate().get(wrapped);
    return ByteBuffer.wrap(new Ciphers.AesGcmDecryptor(master(wrappingKeyId)).decrypt(wrapped, null));
  }
}
