/**
 * The California AI Transparency Act record pack (SB 942 of 2024, Cal. Bus. & Prof. Code
 * § 22757 and following). The statute binds "covered providers" (generative AI systems with
 * over one million monthly users in California) to four duties; this vocabulary has one event
 * per act a provider can prove it performed:
 *
 *   latent_disclosure_embedded   § 22757.3(b): a latent disclosure (provider name, system name
 *                                and version, creation time, unique id) embedded in image,
 *                                video or audio content the system created or altered.
 *   manifest_disclosure_offered  § 22757.3(a): the user was offered a clear, conspicuous
 *                                manifest disclosure, and what the user chose.
 *   detection_tool_available     § 22757.2(a): a release of the free AI detection tool was
 *                                made publicly available (upload, URL or API).
 *   detection_request_answered   § 22757.2(a): the detection tool answered a request, returning
 *                                system provenance data only, never personal provenance data.
 *   license_revoked              § 22757.3(c): a licence was revoked after the licensee removed
 *                                the system's disclosure capability (the statute gives 96 hours
 *                                from discovery; discovered_at and occurred_at show the interval).
 *
 * Field names follow the statute's words (system_name, system_version, provenance data).
 */
import { defineRecordPack } from '../manifest.ts';
import { enumList, enumValue, idValue, key, timestampValue } from '../values.ts';

const MODALITIES = ['image', 'video', 'audio'];

export const CA_SB942_PACK = defineRecordPack({
  name: 'ca-sb942',
  version: '1.0.0',
  title: 'California AI Transparency Act (SB 942) events',
  summary: 'Records latent and manifest disclosures, the free detection tool, its answers and licence revocations.',
  regulation: { name: 'California AI Transparency Act (SB 942, 2024)', citation: 'Cal. Bus. & Prof. Code § 22757 et seq.' },
  rate: 2,
  event_types: [
    {
      id: 'latent_disclosure_embedded',
      action_type: 'latent-disclosure-embedded',
      title: 'Latent disclosure embedded',
      duty: 'Content created or altered by the system carries a latent disclosure detectable by the provider’s detection tool.',
      citations: ['Cal. Bus. & Prof. Code § 22757.3(b)'],
      source_payload: { required: ['content_sha256'], optional: ['disclosed_content_sha256', 'latent_disclosure_sha256'] },
      metadata: {
        content_modality: key(false, 'Kind of content', enumValue(MODALITIES)),
        provider_id: key(false, 'The covered provider named in the disclosure', idValue()),
        system_name: key(false, 'Name of the generative AI system', idValue()),
        system_version: key(false, 'Version of the generative AI system', idValue(64)),
        disclosure_id: key(false, 'The unique identifier carried by the disclosure', idValue()),
        marking_techniques: key(
          false,
          'How the disclosure is embedded',
          enumList(['c2pa-manifest', 'invisible-watermark', 'metadata-embedding', 'fingerprint']),
        ),
        created_at: key(false, 'Time of creation or alteration stated in the disclosure', timestampValue()),
      },
    },
    {
      id: 'manifest_disclosure_offered',
      action_type: 'manifest-disclosure-offered',
      title: 'Manifest disclosure offered',
      duty: 'The user was offered a clear and conspicuous manifest disclosure identifying the content as AI-generated.',
      citations: ['Cal. Bus. & Prof. Code § 22757.3(a)'],
      source_payload: { required: ['content_sha256'], optional: ['disclosure_sha256'] },
      metadata: {
        content_modality: key(false, 'Kind of content', enumValue(MODALITIES)),
        user_choice: key(false, 'What the user chose', enumValue(['included', 'declined', 'no-answer'])),
        disclosure_placement: key(false, 'How the disclosure appears', enumValue(['visible-overlay', 'caption', 'audio-announcement'])),
      },
    },
    {
      id: 'detection_tool_available',
      action_type: 'detection-tool-available',
      title: 'Detection tool release available',
      duty: 'A free AI detection tool lets anyone assess whether content was created or altered by the system.',
      citations: ['Cal. Bus. & Prof. Code § 22757.2(a)'],
      source_payload: { required: ['tool_release_sha256'], optional: ['tool_documentation_sha256'] },
      metadata: {
        tool_version: key(false, 'Version of the detection tool', idValue(64)),
        access_channels: key(false, 'How the public reaches the tool', enumList(['public-web', 'upload', 'url', 'api'])),
        supported_modalities: key(false, 'Content the tool assesses', enumList(MODALITIES)),
      },
    },
    {
      id: 'detection_request_answered',
      action_type: 'detection-request-answered',
      title: 'Detection request answered',
      duty: 'The detection tool answered a request with system provenance data only.',
      citations: ['Cal. Bus. & Prof. Code § 22757.2(a)'],
      source_payload: { required: ['queried_content_sha256'], optional: ['response_sha256'] },
      metadata: {
        content_modality: key(false, 'Kind of content queried', enumValue(MODALITIES)),
        detection_check_result: key(false, 'What the tool found', enumValue(['provider-content-detected', 'not-detected', 'inconclusive'])),
        provenance_output: key(false, 'What provenance data the answer carried', enumValue(['system-provenance-only', 'none'])),
        request_channel: key(false, 'How the request came', enumValue(['public-web', 'upload', 'url', 'api'])),
        tool_version: key(false, 'Version of the detection tool', idValue(64)),
      },
    },
    {
      id: 'license_revoked',
      action_type: 'license-revoked',
      title: 'Licence revoked',
      duty: 'A licence was revoked after the licensee modified the system so it no longer includes the required disclosures.',
      citations: ['Cal. Bus. & Prof. Code § 22757.3(c)'],
      source_payload: { required: ['license_sha256', 'revocation_notice_sha256'], optional: [] },
      metadata: {
        licensee_id: key(false, 'The licensee', idValue()),
        discovered_at: key(false, 'When the provider discovered the modification', timestampValue()),
        revocation_reason: key(false, 'Why', enumValue(['disclosure-capability-removed', 'other-breach'])),
      },
    },
  ],
  catalog_refs: ['pack:ca-sb942', 'claim-boundary:evidence-and-routing'],
  claim_boundary_note: 'A record shows that the declared act was sealed; it is not a determination that the provider complies with SB 942.',
});
