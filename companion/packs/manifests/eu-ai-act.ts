/**
 * The EU AI Act record pack: duty events under Article 50 (transparency obligations for
 * providers and deployers of certain AI systems) of Regulation (EU) 2024/1689. Records say
 * that an act already happened; they are sealed as evidence, never routed for review
 * (interface-spec "Record request", States and transitions).
 */
import { defineRecordPack } from '../manifest.ts';
import { booleanValue, enumList, enumValue, idList, idValue, key, localeValue } from '../values.ts';

const MODALITIES = ['text', 'image', 'audio', 'video'];
const MODEL = key(false, 'Model or system name', idValue());
const MODEL_VERSION = key(false, 'Model or system version', idValue(64));

export const EU_AI_ACT_PACK = defineRecordPack({
  name: 'eu-ai-act',
  version: '1.0.0',
  title: 'EU AI Act: Article 50 transparency events',
  summary: 'Records marking of synthetic output, AI-interaction disclosures and deep-fake labels.',
  regulation: { name: 'Regulation (EU) 2024/1689 (Artificial Intelligence Act)', citation: 'Article 50' },
  rate: 2,
  event_types: [
    {
      id: 'output_marked',
      action_type: 'output-marked',
      title: 'Synthetic output marked',
      duty: 'Providers mark synthetic audio, image, video or text output in a machine-readable format, detectable as artificially generated.',
      citations: ['Regulation (EU) 2024/1689, Art. 50(2)'],
      source_payload: { required: ['content_sha256'], optional: ['marked_content_sha256', 'marking_manifest_sha256'] },
      metadata: {
        marking_techniques: key(
          false,
          'Techniques applied',
          enumList(['c2pa-manifest', 'invisible-watermark', 'metadata-embedding', 'fingerprint', 'cryptographic-signature', 'visible-label']),
        ),
        marking_payload_ids: key(false, 'Ids carried by the marks, e.g. a C2PA manifest URN', idList(16)),
        model: MODEL,
        model_version: MODEL_VERSION,
        content_modality: key(false, 'Kind of content', enumValue(MODALITIES)),
        detection_check_result: key(
          false,
          'Result of checking the marked output with a detector',
          enumValue(['detected', 'not-detected', 'inconclusive', 'not-run']),
        ),
      },
    },
    {
      id: 'disclosure_rendered',
      action_type: 'disclosure-rendered',
      title: 'AI disclosure shown to a person',
      duty: 'Persons are informed that they interact with an AI system, or are exposed to emotion recognition or biometric categorisation.',
      citations: ['Regulation (EU) 2024/1689, Art. 50(1)', 'Regulation (EU) 2024/1689, Art. 50(3)'],
      source_payload: { required: ['disclosure_sha256'], optional: ['content_sha256', 'rendering_sha256'] },
      metadata: {
        disclosure_basis: key(
          false,
          'Which duty the disclosure serves',
          enumValue(['art50-1-ai-interaction', 'art50-3-emotion-recognition', 'art50-3-biometric-categorisation']),
        ),
        disclosure_surface: key(
          false,
          'Where it was shown',
          enumValue(['chat-interface', 'voice', 'email', 'web-page', 'app', 'api-response']),
        ),
        locale: key(false, 'Language of the disclosure', localeValue()),
        model: MODEL,
        model_version: MODEL_VERSION,
      },
    },
    {
      id: 'label_published',
      action_type: 'label-published',
      title: 'Deep-fake or AI-text label published',
      duty: 'Deployers disclose that published deep-fake content, or AI-generated text informing the public, is artificially generated or manipulated.',
      citations: ['Regulation (EU) 2024/1689, Art. 50(4)'],
      source_payload: { required: ['content_sha256', 'label_sha256'], optional: ['publication_sha256'] },
      metadata: {
        label_basis: key(false, 'Which duty the label serves', enumValue(['art50-4-deep-fake', 'art50-4-public-interest-text'])),
        label_placement: key(
          false,
          'How the label appears',
          enumValue(['visible-overlay', 'caption', 'byline', 'audio-announcement', 'end-credits']),
        ),
        publication_channel: key(false, 'Where the content was published', enumValue(['web', 'social', 'broadcast', 'print', 'app'])),
        editorial_control: key(
          false,
          'Whether the text underwent human review and a person holds editorial responsibility (Art. 50(4) exception)',
          booleanValue(),
        ),
        content_modality: key(false, 'Kind of content', enumValue(MODALITIES)),
        locale: key(false, 'Language of the label', localeValue()),
      },
    },
  ],
  catalog_refs: ['pack:eu-ai-act', 'claim-boundary:evidence-and-routing'],
  claim_boundary_note: 'A record shows that the declared act was sealed; it is not a conformity assessment under the AI Act.',
});
