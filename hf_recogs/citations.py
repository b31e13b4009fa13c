"""BibTeX of the papers whose data, metric or models hf_recogs builds on; cards and configs cite by key."""

CITATIONS = {
    "cogs": """@inproceedings{kim-linzen-2020-cogs,
  title = {{COGS}: A Compositional Generalization Challenge Based on Semantic Interpretation},
  author = {Kim, Najoung and Linzen, Tal},
  booktitle = {Proceedings of the 2020 Conference on Empirical Methods in Natural Language Processing (EMNLP)},
  year = {2020},
  pages = {9087--9105},
  url = {https://aclanthology.org/2020.emnlp-main.731}
}""",
    "recogs": """@article{wu-etal-2023-recogs,
  title = {{ReCOGS}: How Incidental Details of a Logical Form Overshadow an Evaluation of Semantic Interpretation},
  author = {Wu, Zhengxuan and Manning, Christopher D. and Potts, Christopher},
  journal = {Transactions of the Association for Computational Linguistics},
  volume = {11},
  year = {2023},
  pages = {1719--1733},
  url = {https://arxiv.org/abs/2303.13716}
}""",
    "variable_free": """@inproceedings{qiu-etal-2022-improving,
  title = {Improving Compositional Generalization with Latent Structure and Data Augmentation},
  author = {Qiu, Linlu and Shaw, Peter and Pasupat, Panupong and Nowak, Pawel and Linzen, Tal and Sha, Fei and Toutanova, Kristina},
  booktitle = {Proceedings of NAACL-HLT 2022},
  year = {2022},
  pages = {4341--4362}
}""",
    "scan": """@inproceedings{lake-baroni-2018-generalization,
  title = {Generalization without Systematicity: On the Compositional Skills of Sequence-to-Sequence Recurrent Networks},
  author = {Lake, Brenden M. and Baroni, Marco},
  booktitle = {Proceedings of the 35th International Conference on Machine Learning (ICML)},
  year = {2018},
  pages = {2873--2882}
}""",
    "scan_template": """@inproceedings{loula-etal-2018-rearranging,
  title = {Rearranging the Familiar: Testing Compositional Generalization in Recurrent Networks},
  author = {Loula, Jo{\\~a}o and Baroni, Marco and Lake, Brenden M.},
  booktitle = {Proceedings of the 2018 EMNLP Workshop BlackboxNLP},
  year = {2018},
  pages = {108--114}
}""",
    "scan_mcd": """@inproceedings{keysers-etal-2020-measuring,
  title = {Measuring Compositional Generalization: A Comprehensive Method on Realistic Data},
  author = {Keysers, Daniel and Sch{\\"a}rli, Nathanael and Scales, Nathan and Buisman, Hylke and Furrer, Daniel and Kashubin, Sergii and Momchev, Nikola and Sinopalnikov, Danila and Stafiniak, Lukasz and Tihon, Tibor and Tsarkov, Dmitry and Wang, Xiao and van Zee, Marc and Bousquet, Olivier},
  booktitle = {International Conference on Learning Representations (ICLR)},
  year = {2020}
}""",
    "sygns": """@inproceedings{yanaka-etal-2021-sygns,
  title = {{SyGNS}: A Systematic Generalization Testbed Based on Natural Language Semantics},
  author = {Yanaka, Hitomi and Mineshima, Koji and Inui, Kentaro},
  booktitle = {Findings of the Association for Computational Linguistics: ACL-IJCNLP 2021},
  year = {2021},
  pages = {103--119}
}""",
    "slog": """@inproceedings{li-etal-2023-slog,
  title = {{SLOG}: A Structural Generalization Benchmark for Semantic Parsing},
  author = {Li, Bingzhi and Donatelli, Lucia and Koller, Alexander and Linzen, Tal and Yao, Yuekun and Kim, Najoung},
  booktitle = {Proceedings of the 2023 Conference on Empirical Methods in Natural Language Processing (EMNLP)},
  year = {2023},
  pages = {3213--3232}
}""",
    "kim2021structure": """@inproceedings{kim-etal-2021-improving,
  title = {Improving Compositional Generalization in Classification Tasks via Structure Annotations},
  author = {Kim, Juyong and Ravikumar, Pradeep and Ainslie, Joshua and Onta{\\~n}{\\'o}n, Santiago},
  booktitle = {Proceedings of the 59th Annual Meeting of the Association for Computational Linguistics and the 11th International Joint Conference on Natural Language Processing (Volume 2: Short Papers)},
  year = {2021},
  pages = {637--645}
}""",
}
# The CFQ paper is also the one that introduced SCAN's MCD splits: one entry, under both names.
CITATIONS["cfq"] = CITATIONS["scan_mcd"]


def bibtex(*keys: str) -> str:
    return "\n\n".join(CITATIONS[key] for key in keys)
