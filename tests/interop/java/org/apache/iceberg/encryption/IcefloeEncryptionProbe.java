package org.apache.iceberg.encryption;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import org.apache.iceberg.Schema;
import org.apache.iceberg.avro.AvroSchemaUtil;
import org.apache.iceberg.avro.GenericAvroReader;
import org.apache.iceberg.avro.GenericAvroWriter;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileAppender;
import org.apache.iceberg.io.SeekableInputStream;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.shaded.org.apache.avro.generic.GenericData;
import org.apache.iceberg.shaded.org.apache.avro.io.BinaryEncoder;
import org.apache.iceberg.shaded.org.apache.avro.io.DecoderFactory;
import org.apache.iceberg.shaded.org.apache.avro.io.EncoderFactory;
import org.apache.iceberg.types.Types;

/**
 * Iceberg's own encryption classes (the Java engine's 1.9.2 runtime jar) driven by icefloe's
 * tests: AES GCM streams, StandardKeyMetadata, key wrapping through a KeyManagementClient, the
 * AES-GCM of manifest list keys, and encrypted Parquet through Iceberg's Parquet writer and reader.
 *
 * <p>Reads one command per line from stdin (tab-separated words) and answers each with one line:
 * {@code ok <result>} or {@code error <exception class> <message>}. Bytes are hex; "-" is null.
 */
public class IcefloeEncryptionProbe {
  /** Java 1.11's StandardKeyMetadata schema: 1.9.2's two fields and file_length (id 2). */
  private static final Schema KEY_METADATA_V1_11 =
      new Schema(
          Types.NestedField.required(0, "encryption_key", Types.BinaryType.get()),
          Types.NestedField.optional(1, "aad_prefix", Types.BinaryType.get()),
          Types.NestedField.optional(2, "file_length", Types.LongType.get()));

  // Another record name than Java's: GenericAvroReader would instantiate 1.9.2's two-field class
  // for that name. The name is not part of Avro's binary encoding.
  private static final org.apache.iceberg.shaded.org.apache.avro.Schema AVRO_V1_11 =
      AvroSchemaUtil.convert(KEY_METADATA_V1_11, "icefloe.probe.StandardKeyMetadataV1_11");

  private static final Schema ROWS =
      new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "name", Types.StringType.get()),
          Types.NestedField.optional(3, "amount", Types.DoubleType.get()));

  private static final HexFormat HEX = HexFormat.of();

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      if (line.isBlank()) {
        continue;
      }
      String[] words = line.split("\t");
      String answer;
      try {
        answer = "ok\t" + run(words);
      } catch (Exception e) {
        answer = "error\t" + e.getClass().getName() + "\t" + String.valueOf(e.getMessage()).replace('\n', ' ');
      }
      System.out.println(answer);
      System.out.flush();
    }
  }

  private static byte[] bytes(String hex) {
    return "-".equals(hex) ? null : HEX.parseHex(hex);
  }

  private static String hex(ByteBuffer buffer) {
    if (buffer == null) {
      return "-";
    }
    byte[] copy = new byte[buffer.remaining()];
    buffer.duplicate().get(copy);
    return HEX.formatHex(copy);
  }

  private static String run(String[] w) throws Exception {
    switch (w[0]) {
      case "ags-write": // key aad plainFile outFile: Java's AesGcmOutputFile
        {
          byte[] data = Files.readAllBytes(Paths.get(w[3]));
          Files.deleteIfExists(Paths.get(w[4]));
          AesGcmOutputFile out =
              new AesGcmOutputFile(org.apache.iceberg.Files.localOutput(w[4]), bytes(w[1]), bytes(w[2]));
          try (OutputStream stream = out.create()) {
            for (int i = 0; i < data.length; i += 65_537) {
              stream.write(data, i, Math.min(65_537, data.length - i));
            }
          }
          return String.valueOf(Files.size(Paths.get(w[4])));
        }
      case "ags-read": // key aad encryptedFile plainOut: Java's AesGcmInputFile
        {
          AesGcmInputFile file =
              new AesGcmInputFile(org.apache.iceberg.Files.localInput(w[3]), bytes(w[1]), bytes(w[2]));
          byte[] plain = new byte[(int) file.getLength()];
          try (SeekableInputStream stream = file.newStream()) {
            int done = 0;
            while (done < plain.length) {
              int n = stream.read(plain, done, Math.min(77_777, plain.length - done));
              if (n < 0) {
                throw new IllegalStateException("short read at " + done);
              }
              done += n;
            }
            if (stream.read() != -1) {
              throw new IllegalStateException("no end of stream after " + plain.length + " bytes");
            }
          }
          Files.write(Paths.get(w[4]), plain);
          return String.valueOf(plain.length);
        }
      case "km-encode": // key aad: 1.9.2's StandardKeyMetadata bytes
        return hex(new StandardKeyMetadata(bytes(w[1]), bytes(w[2])).buffer());
      case "km-decode": // bytes: 1.9.2's StandardKeyMetadata.parse
        {
          StandardKeyMetadata parsed = StandardKeyMetadata.parse(ByteBuffer.wrap(bytes(w[1])));
          return hex(parsed.encryptionKey()) + "\t" + hex(parsed.aadPrefix());
        }
      case "km111-encode": // key aad length|-: what 1.11's KeyMetadataEncoder writes
        {
          GenericData.Record record = new GenericData.Record(AVRO_V1_11);
          record.put(0, ByteBuffer.wrap(bytes(w[1])));
          record.put(1, w[2].equals("-") ? null : ByteBuffer.wrap(bytes(w[2])));
          record.put(2, w[3].equals("-") ? null : Long.parseLong(w[3]));
          ByteArrayOutputStream out = new ByteArrayOutputStream();
          out.write(1); // the schema version byte
          BinaryEncoder encoder = EncoderFactory.get().directBinaryEncoder(out, null);
          GenericAvroWriter.<GenericData.Record>create(AVRO_V1_11).write(record, encoder);
          encoder.flush();
          return HEX.formatHex(out.toByteArray());
        }
      case "km111-decode": // bytes: what 1.11's KeyMetadataDecoder reads
        {
          byte[] data = bytes(w[1]);
          if (data[0] != 1) {
            throw new IllegalArgumentException("version " + data[0]);
          }
          GenericAvroReader<GenericData.Record> reader = GenericAvroReader.create(AVRO_V1_11);
          reader.setSchema(AVRO_V1_11); // the writer's schema, as KeyMetadataDecoder resolves it
          GenericData.Record record =
              reader.read(null, DecoderFactory.get().binaryDecoder(data, 1, data.length - 1, null));
          Object length = record.get(2);
          return hex((ByteBuffer) record.get(0))
              + "\t"
              + hex((ByteBuffer) record.get(1))
              + "\t"
              + (length == null ? "-" : length.toString());
        }
      case "kms-wrap": // keysFile tableKeyId keyHex: a KMS client loaded as Iceberg loads one
        return hex(manager(w[1], w[2]).wrapKey(ByteBuffer.wrap(bytes(w[3]))));
      case "kms-unwrap": // keysFile tableKeyId wrappedHex
        return hex(manager(w[1], w[2]).unwrapKey(ByteBuffer.wrap(bytes(w[3]))));
      case "gcm-encrypt": // key aadUtf8|- plainHex: Ciphers, as manifest list keys are sealed
        return HEX.formatHex(
            new Ciphers.AesGcmEncryptor(bytes(w[1])).encrypt(bytes(w[3]), utf8(w[2])));
      case "gcm-decrypt": // key aadUtf8|- sealedHex
        return HEX.formatHex(
            new Ciphers.AesGcmDecryptor(bytes(w[1])).decrypt(bytes(w[3]), utf8(w[2])));
      case "parquet-write": // key aad path rows: Iceberg's Parquet writer, as for a data file
        {
          Files.deleteIfExists(Paths.get(w[3]));
          int rows = Integer.parseInt(w[4]);
          try (FileAppender<Record> writer =
              Parquet.write(org.apache.iceberg.Files.localOutput(w[3]))
                  .schema(ROWS)
                  .createWriterFunc(GenericParquetWriter::buildWriter)
                  .withFileEncryptionKey(ByteBuffer.wrap(bytes(w[1])))
                  .withAADPrefix(ByteBuffer.wrap(bytes(w[2])))
                  .build()) {
            for (long i = 0; i < rows; i++) {
              Record record = GenericRecord.create(ROWS);
              record.setField("id", i);
              record.setField("name", i % 7 == 0 ? null : "JAVA-" + i);
              record.setField("amount", i * 1.5);
              writer.add(record);
            }
          }
          return String.valueOf(Files.size(Paths.get(w[3])));
        }
      case "parquet-read": // keyMetadataHex path: the key and AAD prefix from StandardKeyMetadata
        {
          StandardKeyMetadata key = StandardKeyMetadata.parse(ByteBuffer.wrap(bytes(w[1])));
          long count = 0;
          long ids = 0;
          double amounts = 0;
          long nulls = 0;
          try (CloseableIterable<Record> rows =
              Parquet.read(org.apache.iceberg.Files.localInput(w[2]))
                  .project(ROWS)
                  .createReaderFunc(schema -> GenericParquetReaders.buildReader(ROWS, schema))
                  .withFileEncryptionKey(key.encryptionKey())
                  .withAADPrefix(key.aadPrefix())
                  .build()) {
            for (Record row : rows) {
              count++;
              ids += (Long) row.getField("id");
              Object amount = row.getField("amount");
              amounts += amount == null ? 0 : (Double) amount;
              nulls += row.getField("name") == null ? 1 : 0;
            }
          }
          return count + "\t" + ids + "\t" + amounts + "\t" + nulls;
        }
      default:
        throw new IllegalArgumentException("unknown command " + w[0]);
    }
  }

  private static byte[] utf8(String text) {
    return "-".equals(text) ? null : text.getBytes(StandardCharsets.UTF_8);
  }

  private static StandardEncryptionManager manager(String keysFile, String tableKeyId) {
    Map<String, String> properties = new HashMap<>();
    properties.put("encryption.kms-impl", IcefloeLocalKms.class.getName());
    properties.put("encryption.kms.local.keys-file", keysFile);
    return new StandardEncryptionManager(tableKeyId, 16, EncryptionUtil.createKmsClient(properties));
  }
}
